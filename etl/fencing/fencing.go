// Package fencing holds what agora's database sinks share to refuse stale
// writers: the sentinel errors, the token a run writes with, and the rules
// that judge a write against what the resource recorded.
//
// A resource (by default a sink's table) remembers, in a table
// agora_fencing(resource text primary key, token bigint not null) of the
// same database, the highest fencing token that wrote to it. Every fenced
// write locks that row in the transaction that writes the data, refuses the
// transaction when the run's token is lower than the stored one, and
// otherwise stores the run's token and commits it together with the data.
// A token equal to the stored one is the same run writing its next batch
// and is accepted. The runs of a backfill are the exception (below).
//
// # The slot ledger
//
// The token rule cannot tell two runs of one scheduled slot apart: when the
// coordination Redis loses its data, a second replica may run a slot that
// already ran, with a higher token, and the rule accepts it. So the same
// database keeps a ledger, a table
//
//	agora_slots(resource text, slot bigint, token bigint, completed boolean,
//	            primary key (resource, slot))
//
// of its own (agora_fencing is left as it was, so databases made before the
// ledger keep working and gain the table at their first fenced write). A
// row says which run (fencing token) of a slot wrote to the resource, and
// whether that run completed. A slot run is one whose lease is a slot
// (runtime.Lease.Slot: cron and Every runs, backfills; SlotOf); Continuous,
// Once and triggered runs keep the token rule alone and leave no ledger
// row.
//
// A scheduled slot run's first write to a resource (its token above the
// stored one), under the same row lock and in the same transaction as its
// rows, reads the slot's row (CheckSlot):
//   - none: it inserts one with its token, not completed, unless the ledger
//     already holds SlotsKept rows, all of newer slots: the slot is older
//     than the ledger can remember, and the write is refused with a
//     *SlotForgottenError wrapping ErrSlotForgotten (CheckForgotten; this
//     holds for every insert, backfill runs' too), which fails the run (it
//     is neither a completed slot nor a stale writer), rather than inserted
//     and trimmed at once, which would let a later run write the slot
//     again;
//   - its own token: its next batch (later batches, whose token equals the
//     stored one, do not read the ledger: no other run can have changed
//     the row without storing a higher token, and a backfill run leaves
//     such a row alone);
//   - completed by another token: refused with a *SlotDoneError wrapping
//     ErrSlotDone, logged at WARN with both tokens and counted
//     (SlotDoneRefusals, agora_fencing_refusals_total{reason="slot_done"});
//     the error matches runtime.ErrSlotCompleted, so the pool does not
//     retry the run and goes on to the next slot;
//   - not completed, lower token: the earlier run died or lost its lease (or
//     was a backfill run); this run takes the slot over (the row takes its
//     token) and writes;
//   - not completed, higher token: a stale writer (*StaleWriterError).
//
// # Backfill runs
//
// A backfill runs old slots with fresh, higher tokens while the scheduled
// slots go on; under the token rule its tokens would make the scheduled
// runs stale. So a backfill run (runtime.Lease.Backfill; BackfillOf) never
// meets the token rule and stores no token: every one of its transactions
// locks the resource's row and reads its slot's row, and is judged by that
// row and the stored token (CheckSlotBackfill):
//   - none: inserted (the forgotten-slot refusal as above);
//   - its own token: its next batch;
//   - completed by another token: *SlotDoneError, unless the run
//     reprocesses its slot (runtime.Lease.Reprocess, a backfill with
//     --reprocess; ReprocessOf) and the row's token is lower: it takes the
//     row over (not completed until it completes);
//   - not completed, lower token equal to the stored one: the row's run is
//     the resource's newest token writer, possibly the slot's scheduled run
//     still writing (its next batches skip the ledger read), so taking over
//     would let both write the slot: refused with a *SlotBusyError wrapping
//     ErrSlotBusy, logged at WARN and counted (SlotBusyRefusals,
//     agora_fencing_refusals_total{reason="slot_busy"});
//   - not completed, lower token, another one than the stored: taken over
//     (below the stored token the row's run is refused by the token rule
//     if it writes again; above it, it is a backfill run, which reads the
//     row at its next batch);
//   - not completed, higher token: *StaleWriterError.
//
// When the run succeeds its row is marked completed, in a transaction that
// takes the same lock: the etl pipeline calls the sinks' Complete after the
// last batch was acknowledged and flushed, before the run reports success
// (etl.Completer); hand-written pipelines pass CompletesSlot to their last
// FencedTx or call CompleteSlot. A run that completes without having
// written inserts its row completed (a slot whose run found nothing is
// done too), or takes an interrupted run's row over (a reprocessing
// backfill run, a completed one's too) and, unless it is a backfill run,
// stores its token, so the interrupted run cannot add to the slot
// afterwards. A backfill run's completion follows the backfill rules.
//
// The ledger keeps the SlotsKept newest slots per resource; the oldest row
// is deleted when a new slot's row is inserted into a full ledger.
package fencing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// Table is the name of the table that holds each resource's highest token.
const Table = "agora_fencing"

// ErrStaleWriter is wrapped by the error of a write refused because a
// newer fencing token has already written to the resource: another worker
// has taken the pipeline over, and this run must stop writing. It also
// matches runtime.ErrStaleWrite, so the pool that ran the pipeline counts
// the run as refused (agora_stale_writes_refused_total) and notifies.
var ErrStaleWriter error = staleWriter{}

// staleWriter is the type of ErrStaleWriter: a sentinel that is also
// runtime.ErrStaleWrite for errors.Is, since runtime cannot import this
// package.
type staleWriter struct{}

func (staleWriter) Error() string {
	return "fencing: stale writer: a newer fencing token has already written to the resource"
}

// Is reports whether target is runtime.ErrStaleWrite.
func (staleWriter) Is(target error) bool { return target == runtime.ErrStaleWrite }

// ErrUnfenced is wrapped by the error of a write refused because the run
// holds no fenced lease (fencing token 0, as under FallbackToLocal or
// outside a distributed pool) and unfenced writes were not allowed.
var ErrUnfenced = errors.New("fencing: the run holds no fenced lease (fencing token 0)")

// StaleWriterError is the error of a refused stale write. It wraps
// ErrStaleWriter.
type StaleWriterError struct {
	// Resource is the fenced resource, such as a table name.
	Resource string
	// Token is the refused run's fencing token.
	Token int64
	// Stored is the higher token the resource had already accepted.
	Stored int64
}

// Error names the resource and both tokens.
func (e *StaleWriterError) Error() string {
	return fmt.Sprintf("%v: resource %q: run token %d < stored token %d", ErrStaleWriter, e.Resource, e.Token, e.Stored)
}

// Unwrap returns ErrStaleWriter.
func (e *StaleWriterError) Unwrap() error { return ErrStaleWriter }

// RunOutcome records a run that failed with e as refused as stale in the
// run history.
func (e *StaleWriterError) RunOutcome() history.Outcome { return history.OutcomeStale }

// refusals counts stale writes refused by this process.
var refusals atomic.Int64

// Refusals returns how many writes this process has refused as stale, over
// every sink and FencedTx call.
func Refusals() int64 { return refusals.Load() }

// Check compares a run's token with the one the resource stored. It
// returns nil when token is at least stored, and otherwise a
// *StaleWriterError, which it counts and logs at WARN with both tokens.
func Check(ctx context.Context, logger *slog.Logger, resource string, token, stored int64) error {
	if token >= stored {
		return nil
	}
	refusals.Add(1)
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(ctx, slog.LevelWarn, "stale writer refused: a newer fencing token has already written",
		slog.String("resource", resource), slog.Int64("fencing_token", token), slog.Int64("stored_token", stored))
	return &StaleWriterError{Resource: resource, Token: token, Stored: stored}
}

// Token returns the fencing token of the run ctx belongs to. A run without
// a fenced lease gets ErrUnfenced, unless allowUnfenced, in which case the
// token is 0, unfenced is true, and the caller writes without fencing and
// says so with WarnUnfenced.
func Token(ctx context.Context, resource string, allowUnfenced bool) (token int64, unfenced bool, err error) {
	lease, _ := runtime.LeaseFromContext(ctx)
	if lease.Fenced() {
		return lease.FencingToken, false, nil
	}
	if !allowUnfenced {
		// Without a coordinator a run holds no fenced lease: naming the
		// variable that configures one says how to get fencing back.
		return 0, false, fmt.Errorf("resource %q: %w; set AGORA_DISTRIBUTED_REDIS_URL so runs hold fenced leases, or allow_unfenced = true to write without fencing", resource, ErrUnfenced)
	}
	return 0, true, nil
}

// WarnUnfenced logs at WARN that a write to resource goes ahead without
// fencing, so an unfenced write is never silent. Sinks call it once per
// run.
func WarnUnfenced(ctx context.Context, logger *slog.Logger, resource string) {
	if logger == nil {
		logger = slog.Default()
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	logger.LogAttrs(ctx, slog.LevelWarn, "unfenced write: the run holds no fenced lease and allow_unfenced is set, so a stale writer would not be refused",
		slog.String("resource", resource), slog.String("pipeline_id", lease.PipelineID))
}
