package fencing

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Ledger is the name of the table that records, per resource and slot,
// which run wrote to the resource and whether that run completed.
const Ledger = "agora_slots"

// SlotsKept is how many slots per resource the ledger keeps: when a new
// slot's row is inserted, rows of slots older than the SlotsKept newest are
// deleted. It is ten times runtime.MaxCatchUpRuns, so every slot a
// catch-up or a duplicate run can still reach is in the ledger.
const SlotsKept = 1024

// ErrSlotDone is wrapped by the error of a write refused because another
// run (a different fencing token) had already completed the run's slot: the
// slot's rows are that run's, and this one must not add to them. It also
// matches runtime.ErrSlotCompleted (errors.Is), so the pool treats the run
// as a completed slot: not retried, no error counted, on to the next slot.
var ErrSlotDone error = slotDoneSentinel{}

type slotDoneSentinel struct{}

func (slotDoneSentinel) Error() string {
	return "fencing: slot done: another run already completed this slot"
}

// Is makes ErrSlotDone match runtime.ErrSlotCompleted.
func (slotDoneSentinel) Is(target error) bool { return target == runtime.ErrSlotCompleted }

// SlotDoneError is the error of a write refused because its slot was
// completed by another run. It wraps ErrSlotDone.
type SlotDoneError struct {
	// Resource is the fenced resource, such as a table name.
	Resource string
	// Slot is the slot, its scheduled start in Unix seconds.
	Slot int64
	// Token is the refused run's fencing token.
	Token int64
	// CompletedBy is the fencing token of the run that completed the slot.
	CompletedBy int64
}

// Error names the resource, the slot and both tokens.
func (e *SlotDoneError) Error() string {
	return fmt.Sprintf("%v: resource %q, slot %d (%s): run token %d, completed by token %d", ErrSlotDone, e.Resource, e.Slot,
		time.Unix(e.Slot, 0).UTC().Format(time.RFC3339), e.Token, e.CompletedBy)
}

// Unwrap returns ErrSlotDone.
func (e *SlotDoneError) Unwrap() error { return ErrSlotDone }

// slotDoneRefusals counts writes refused with ErrSlotDone by this process.
var slotDoneRefusals atomic.Int64

// SlotDoneRefusals returns how many writes (and completions) this process
// has refused because their slot was completed by another run, over every
// sink and FencedTx call.
func SlotDoneRefusals() int64 { return slotDoneRefusals.Load() }

// SlotRow is a resource's ledger row for one slot, as read inside the
// fenced transaction.
type SlotRow struct {
	// Found is false when the slot has no row yet.
	Found bool
	// Token is the fencing token of the run that wrote to the resource for
	// the slot (or completed it).
	Token int64
	// Completed reports that this run completed.
	Completed bool
}

// SlotAction is what a write CheckSlot accepts does to the ledger row.
type SlotAction int

// The ledger actions.
const (
	// SlotKeep: the row is the run's own (its next batch); leave it.
	SlotKeep SlotAction = iota
	// SlotInsert: the slot has no row; insert one with the run's token.
	SlotInsert
	// SlotTakeOver: the slot's earlier run did not complete (its holder
	// died or lost its lease); the row takes the run's token.
	SlotTakeOver
)

// CheckSlot applies the ledger rules to a run of slot with token, given the
// slot's row:
//   - no row: SlotInsert;
//   - the run's own token: SlotKeep;
//   - completed by another token: a *SlotDoneError, counted and logged at
//     WARN with both tokens;
//   - not completed, lower token: SlotTakeOver (the re-run of a slot whose
//     run died), logged at INFO with both tokens;
//   - not completed, higher token: a *StaleWriterError, as Check gives.
func CheckSlot(ctx context.Context, logger *slog.Logger, resource string, slot, token int64, row SlotRow) (SlotAction, error) {
	if logger == nil {
		logger = slog.Default()
	}
	switch {
	case !row.Found:
		return SlotInsert, nil
	case row.Token == token:
		return SlotKeep, nil
	case row.Completed:
		slotDoneRefusals.Add(1)
		logger.LogAttrs(ctx, slog.LevelWarn, "write refused: another run already completed this slot",
			slog.String("resource", resource), slog.Int64("slot", slot),
			slog.Int64("fencing_token", token), slog.Int64("completed_by_token", row.Token))
		return SlotKeep, &SlotDoneError{Resource: resource, Slot: slot, Token: token, CompletedBy: row.Token}
	case row.Token < token:
		logger.LogAttrs(ctx, slog.LevelInfo, "slot re-run: the slot's earlier run did not complete; this run takes it over",
			slog.String("resource", resource), slog.Int64("slot", slot),
			slog.Int64("fencing_token", token), slog.Int64("earlier_token", row.Token))
		return SlotTakeOver, nil
	}
	return SlotKeep, Check(ctx, logger, resource, token, row.Token)
}

// SlotOf returns the slot of the run ctx belongs to when that run's lease
// carries token and is a slot (runtime.Lease.Slot: a cron or Every run);
// ok is false for Continuous, Once and triggered runs, which keep the
// token rule alone, and when ctx carries another lease or none.
func SlotOf(ctx context.Context, token int64) (slot int64, ok bool) {
	lease, _ := runtime.LeaseFromContext(ctx)
	if !lease.Slot || token <= 0 || lease.FencingToken != token {
		return 0, false
	}
	return lease.RunNumber, true
}

// TxOption configures one FencedTx call of the postgres and sqlite
// packages.
type TxOption func(*TxOptions)

// TxOptions is what the TxOption values of one FencedTx call set.
type TxOptions struct {
	// Complete marks the run's slot completed in the transaction.
	Complete bool
}

// CompletesSlot says that the FencedTx call is the run's last transaction
// on the resource: after fn, in the same transaction, the slot's ledger row
// is marked completed, so any other run of the slot is refused from then
// on (ErrSlotDone). It applies to slot runs (SlotOf); for other runs it
// does nothing.
func CompletesSlot() TxOption { return func(o *TxOptions) { o.Complete = true } }

// ApplyTxOptions returns the options opts set.
func ApplyTxOptions(opts []TxOption) TxOptions {
	var o TxOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
