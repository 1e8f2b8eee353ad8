package runtime

import (
	"context"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// BackfillPollInterval is how often a pool asks its Backfiller for the
// slots of running backfills.
const BackfillPollInterval = engine.BackfillPollInterval

// Backfiller is the optional capability (Capabilities.Backfiller) that
// runs the fleet's backfills (docs/backfill.md): every slot of a cron or
// every pipeline in a range, each once across the fleet, beside the
// scheduled slots. The pool asks Backfilling every BackfillPollInterval
// and claims slots of those pipelines while they are not paused; each slot
// runs like a scheduled one (factory, run context, timeout, tracing,
// history) under its own lease, which the coordinator keeps renewed and,
// once lost, reports to the lease-lost callback with Lease.Backfill set.
type Backfiller interface {
	// Backfilling returns this worker's pipelines that have a running
	// backfill, as the coordinator last read them.
	Backfilling() []string
	// ClaimBackfill hands this worker the next slot of pipelineID's
	// running backfill, the slots being those of schedule: its lease
	// (RunNumber the slot's start in Unix seconds, Slot and Backfill set,
	// Reprocess as asked, a fresh FencingToken) and its runs' parameters.
	// ok is false when there is none to run now: the backfill's parallel
	// slots are in flight, none is left, or it ended.
	ClaimBackfill(ctx context.Context, pipelineID string, schedule Schedule) (slot BackfillSlot, ok bool, err error)
	// FinishBackfill gives a claimed slot's lease back and records how it
	// ended: rec is its run (the lease's run number, token and worker),
	// nil when it did not run because the slot had completed before. A rec
	// with OutcomeCancelled and no Start gives the slot back uncounted: it
	// did not run, its backfill having been cancelled while it waited.
	FinishBackfill(ctx context.Context, lease Lease, rec *history.Record) error
}

// BackfillSlot is a slot a Backfiller handed this worker.
type BackfillSlot struct {
	// Lease is the slot's lease.
	Lease Lease
	// Params are the run's parameters (ParamsFromContext); nil for none.
	Params map[string]string
	// WaitUpstream makes the slot wait, before it runs, until each of the
	// pipeline's upstreams (ScheduledPipeline.After) completed it: a
	// dependent's backfill started with fleet backfill --downstream. It
	// waits AfterTimeout at most (BackfillUpstreamWait when unset) and
	// then fails, naming the upstream.
	WaitUpstream bool
}

// BackfillUpstreamWait is how long a backfill slot with WaitUpstream waits
// for its upstreams when the pipeline sets no AfterTimeout.
const BackfillUpstreamWait = engine.BackfillUpstreamWait
