package runtime

import "time"

// Lease is a worker's exclusive right to run one pipeline for one run.
type Lease struct {
	// PipelineID names the pipeline the lease is for.
	PipelineID string
	// WorkerID names the worker that holds the lease.
	WorkerID string
	// RunNumber names the run: for cron and Every schedules the slot's start in
	// Unix seconds, for a counted run the number asked for, for Continuous
	// and Once a number the coordinator hands out.
	RunNumber int64
	// Slot reports that RunNumber is a scheduled slot (a cron or Every run,
	// RunNumber its start in Unix seconds) rather than a counted run or a
	// number the coordinator handed out (Continuous, Once, a triggered
	// run). The
	// database sinks record a slot's writes in their slot ledger, so a slot
	// another run completed is refused (fencing.ErrSlotDone).
	Slot bool
	// Backfill reports that the run is one slot of a backfill (fleet
	// backfill, fleet trigger --slot): database sinks fence it by its slot's
	// ledger row alone and store no token for it, so it writes beside the
	// scheduled runs without refusing them. Reprocess is only ever set with
	// it.
	Backfill bool
	// Reprocess reports that the backfill run replaces a slot that may
	// already have completed: a backfill with --reprocess. Database sinks
	// let it take over a completed slot row with a higher token.
	Reprocess bool
	// FencingToken is strictly greater than every token issued before it for the
	// same pipeline; a downstream store can reject writes that carry a smaller
	// one. 0 means unfenced (a local or fallback lease) and never equals a real
	// token.
	FencingToken int64
	// AcquiredAt is when the lease was granted, by the worker's clock.
	AcquiredAt time.Time
	// ExpiresAt is when the lease lapses unless renewed, by the worker's clock.
	ExpiresAt time.Time
}

// Fenced reports whether the lease carries a real fencing token.
func (l Lease) Fenced() bool { return l.FencingToken > 0 }
