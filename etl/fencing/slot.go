package fencing

import (
	"context"
	"errors"
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
		rfc3339(e.Slot), e.Token, e.CompletedBy)
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

// CheckSlot applies the ledger rules to a slot run that is not a backfill
// run (a scheduled run) with token, at its first write to the resource
// (its token above the stored one), given the slot's row:
//   - no row: SlotInsert;
//   - the run's own token: SlotKeep;
//   - completed by another token: a *SlotDoneError, counted and logged at
//     WARN with both tokens;
//   - not completed, lower token: SlotTakeOver (the re-run of a slot whose
//     run died), logged at INFO with both tokens;
//   - not completed, higher token: a *StaleWriterError naming the row's
//     token, as Check gives.
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
		return SlotKeep, slotDone(ctx, logger, resource, slot, token, row.Token)
	case row.Token < token:
		takeOver(ctx, logger, resource, slot, token, row.Token)
		return SlotTakeOver, nil
	}
	return SlotKeep, Check(ctx, logger, resource, token, row.Token)
}

// CheckSlotBackfill applies the ledger rules to a backfill run of slot
// with token (BackfillOf), at every one of its transactions, given the
// slot's row and the token the resource stored. A backfill run is judged
// by its slot's row alone (it never meets the token rule, and stores no
// token), so it writes beside the scheduled runs of other slots:
//   - no row: SlotInsert;
//   - the run's own token: SlotKeep;
//   - completed by another token: a *SlotDoneError, as CheckSlot gives,
//     unless reprocess (ReprocessOf) and the row's token is lower: then
//     SlotTakeOver, logged at INFO (the row takes the run's token, not
//     completed until the run completes);
//   - not completed, lower token than the run's, and equal to stored: the
//     row's run is the resource's newest token writer, possibly a
//     scheduled run still writing the slot, whose next batches do not read
//     the ledger (their token equals the stored one); taking the row over
//     would let both write the slot, so the backfill run is refused with a
//     *SlotBusyError, counted and logged at WARN;
//   - not completed, lower token, not equal to stored: SlotTakeOver,
//     logged at INFO. Below stored, the row's run is refused by the token
//     rule if it writes again; above it, it is a backfill run, which reads
//     the row at its next batch and finds it taken;
//   - not completed, higher token: a *StaleWriterError naming the row's
//     token.
func CheckSlotBackfill(ctx context.Context, logger *slog.Logger, resource string, slot, token, stored int64, reprocess bool, row SlotRow) (SlotAction, error) {
	if logger == nil {
		logger = slog.Default()
	}
	switch {
	case !row.Found:
		return SlotInsert, nil
	case row.Token == token:
		return SlotKeep, nil
	case row.Completed && reprocess && row.Token < token:
		logger.LogAttrs(ctx, slog.LevelInfo, "slot reprocessed: this run replaces the slot an earlier run completed",
			slog.String("resource", resource), slog.Int64("slot", slot),
			slog.Int64("fencing_token", token), slog.Int64("completed_by_token", row.Token))
		return SlotTakeOver, nil
	case row.Completed:
		return SlotKeep, slotDone(ctx, logger, resource, slot, token, row.Token)
	case row.Token < token && row.Token == stored:
		busyRefusals.Add(1)
		logger.LogAttrs(ctx, slog.LevelWarn, "write refused: the slot's run may still be writing it; the backfill leaves it",
			slog.String("resource", resource), slog.Int64("slot", slot),
			slog.Int64("fencing_token", token), slog.Int64("busy_token", row.Token))
		return SlotKeep, &SlotBusyError{Resource: resource, Slot: slot, Token: token, Busy: row.Token}
	case row.Token < token:
		takeOver(ctx, logger, resource, slot, token, row.Token)
		return SlotTakeOver, nil
	}
	return SlotKeep, Check(ctx, logger, resource, token, row.Token)
}

// slotDone counts, logs and returns the refusal of a run whose slot
// another token completed.
func slotDone(ctx context.Context, logger *slog.Logger, resource string, slot, token, completedBy int64) error {
	slotDoneRefusals.Add(1)
	logger.LogAttrs(ctx, slog.LevelWarn, "write refused: another run already completed this slot",
		slog.String("resource", resource), slog.Int64("slot", slot),
		slog.Int64("fencing_token", token), slog.Int64("completed_by_token", completedBy))
	return &SlotDoneError{Resource: resource, Slot: slot, Token: token, CompletedBy: completedBy}
}

// takeOver logs a run taking over the row of its slot's earlier run.
func takeOver(ctx context.Context, logger *slog.Logger, resource string, slot, token, earlier int64) {
	logger.LogAttrs(ctx, slog.LevelInfo, "slot re-run: the slot's earlier run did not complete; this run takes it over",
		slog.String("resource", resource), slog.Int64("slot", slot),
		slog.Int64("fencing_token", token), slog.Int64("earlier_token", earlier))
}

// ErrSlotBusy is wrapped by the error of a backfill run's write refused
// because its slot's ledger row belongs to a run that may still be
// writing the slot: a lower token, not completed, and the resource's
// stored token (a scheduled run's, whose next batches do not read the
// ledger). The backfill leaves the slot to that run. It matches neither
// runtime.ErrSlotCompleted nor ErrStaleWriter: the backfill run fails, and
// the slot can be backfilled once that run completed (reprocess) or was
// superseded.
var ErrSlotBusy = errors.New("fencing: slot busy: the slot's run may still be writing it")

// SlotBusyError is the error of a backfill run's write refused because
// its slot's run may still be writing the slot. It wraps ErrSlotBusy.
type SlotBusyError struct {
	// Resource is the fenced resource, such as a table name.
	Resource string
	// Slot is the slot, its scheduled start in Unix seconds.
	Slot int64
	// Token is the refused backfill run's fencing token.
	Token int64
	// Busy is the token of the slot's run that may still be writing it.
	Busy int64
}

// Error names the resource, the slot in RFC 3339 and both tokens.
func (e *SlotBusyError) Error() string {
	return fmt.Sprintf("%v: resource %q, slot %s (%d): run token %d: the slot's run with token %d may still be writing it; the backfill leaves it",
		ErrSlotBusy, e.Resource, rfc3339(e.Slot), e.Slot, e.Token, e.Busy)
}

// Unwrap returns ErrSlotBusy.
func (e *SlotBusyError) Unwrap() error { return ErrSlotBusy }

// busyRefusals counts writes refused with ErrSlotBusy.
var busyRefusals atomic.Int64

// SlotBusyRefusals returns how many backfill writes (and completions) this
// process has refused because their slot's run may still be writing it.
func SlotBusyRefusals() int64 { return busyRefusals.Load() }

// ErrSlotForgotten is wrapped by the error of a write refused because its
// slot is older than every slot the ledger remembers for the resource: the
// ledger already holds SlotsKept rows, all of newer slots, so a row for
// this slot would be trimmed at once, and a later run of the slot could
// write it again. It matches neither runtime.ErrSlotCompleted nor
// ErrStaleWriter: the run fails (the slot is not known to be completed),
// and is retried under the pipeline's error policy like any failure; a
// backfill reaching that far back must write elsewhere (another resource)
// or not at all.
var ErrSlotForgotten = errors.New("fencing: slot forgotten: the slot is older than every slot the ledger keeps for the resource")

// SlotForgottenError is the error of a write refused because the ledger
// cannot remember its slot. It wraps ErrSlotForgotten.
type SlotForgottenError struct {
	// Resource is the fenced resource, such as a table name.
	Resource string
	// Slot is the refused run's slot, its scheduled start in Unix seconds.
	Slot int64
	// Token is the refused run's fencing token.
	Token int64
	// Oldest is the oldest slot the ledger keeps for the resource.
	Oldest int64
}

// Error names the resource, the slot and the oldest slot kept, in RFC 3339.
func (e *SlotForgottenError) Error() string {
	return fmt.Sprintf("%v: resource %q, slot %s (%d): the ledger keeps the %d newest slots, the oldest %s; run token %d",
		ErrSlotForgotten, e.Resource, rfc3339(e.Slot), e.Slot, SlotsKept, rfc3339(e.Oldest), e.Token)
}

// Unwrap returns ErrSlotForgotten.
func (e *SlotForgottenError) Unwrap() error { return ErrSlotForgotten }

func rfc3339(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// forgottenRefusals counts writes refused with ErrSlotForgotten.
var forgottenRefusals atomic.Int64

// SlotForgottenRefusals returns how many writes (and completions) this
// process has refused because the ledger could not remember their slot.
func SlotForgottenRefusals() int64 { return forgottenRefusals.Load() }

// CheckForgotten refuses a run of slot that has no ledger row when the
// resource's ledger already holds SlotsKept rows: kept is the slot of the
// SlotsKept-th newest row, found false when there are fewer rows. It
// returns a *SlotForgottenError, counted and logged at WARN, when slot is
// older than kept, and nil otherwise (the new row is then kept, and the
// oldest one trimmed when slot is newer).
func CheckForgotten(ctx context.Context, logger *slog.Logger, resource string, slot, token int64, kept int64, found bool) error {
	if !found || slot > kept {
		return nil
	}
	forgottenRefusals.Add(1)
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(ctx, slog.LevelWarn, "write refused: the slot is older than every slot the ledger keeps",
		slog.String("resource", resource), slog.String("slot", rfc3339(slot)),
		slog.Int64("fencing_token", token), slog.String("oldest_kept_slot", rfc3339(kept)))
	return &SlotForgottenError{Resource: resource, Slot: slot, Token: token, Oldest: kept}
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

// BackfillOf reports whether the run ctx belongs to is a slot run holding
// token (SlotOf) that is one slot of a backfill (runtime.Lease.Backfill; a
// lease with Reprocess counts as one too): the database sinks then fence
// it by its slot's ledger row alone (CheckSlotBackfill) and store no token
// for it.
func BackfillOf(ctx context.Context, token int64) bool {
	if _, ok := SlotOf(ctx, token); !ok {
		return false
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	return lease.Backfill || lease.Reprocess
}

// ReprocessOf reports whether the run ctx belongs to is a slot run holding
// token (SlotOf) whose lease asks to reprocess its slot
// (runtime.Lease.Reprocess: a backfill with --reprocess): the ledger then
// lets it take over a slot a lower token completed (CheckSlotBackfill). A
// reprocessing run is a backfill run (BackfillOf).
func ReprocessOf(ctx context.Context, token int64) bool {
	if _, ok := SlotOf(ctx, token); !ok {
		return false
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	return lease.Reprocess
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
