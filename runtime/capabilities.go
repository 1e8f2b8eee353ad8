package runtime

import "context"

// Capabilities is what a Coordinator can do beyond the methods of the
// Coordinator interface, in one value: Coordinator.Capabilities returns
// it, and the pool reads it once per Run (or RunNow, or
// ScheduledPipeline.Start), before Start, and keeps it. Each field is one
// optional capability; a nil field is one the coordinator lacks, and the
// pool then does what that field's comment says. No capability is found
// by a type assertion on the coordinator, so a coordinator that wraps
// another one keeps every capability of the inner one by forwarding this
// one method — which a struct embedding the inner Coordinator does by
// itself:
//
//	type loggingCoordinator struct {
//		runtime.Coordinator // forwards Capabilities, batching included
//		log *slog.Logger
//	}
//
// A wrapper that changes how leases are taken or given back (it overrides
// TryAcquireLease, ReleaseLease or CompleteLease) sees the local, batched
// and combined paths only if it replaces LocalLeaser, BatchLeaser and
// RunRecorder in the inner Capabilities with its own (or sets them nil, so
// the pool falls back to the methods it overrides). The contract every
// coordinator keeps, with or without capabilities, is tested by package
// runtime/coordinatortest.
type Capabilities struct {
	// LocalLeaser takes and gives back leases held in this process's
	// memory, with no context or timeout and no check that a granted lease
	// is still held; the pool then reads neither BatchLeaser (nor
	// LeaseDeferrer and LeaseAheader) nor FailureSharer, which serve
	// coordinators that ask a server. nil: the pool uses the Coordinator's
	// methods, each call bounded by a timeout.
	LocalLeaser LocalLeaser
	// BatchLeaser decides many lease requests in one call. nil: the pool
	// asks TryAcquireLease once per run, each in its own goroutine.
	BatchLeaser BatchLeaser
	// LeaseDeferrer spreads a fleet's lease requests over its workers; read
	// only with BatchLeaser. nil: every request is sent at once.
	LeaseDeferrer LeaseDeferrer
	// LeaseAheader asks for cron slots' leases before their boundaries;
	// read only with BatchLeaser. nil: leases are asked for at the slot.
	LeaseAheader LeaseAheader
	// HealthReporter tells /readyz whether the coordinator is usable. nil:
	// always usable.
	HealthReporter HealthReporter
	// StatusReporter adds the coordinator's state to /status. nil:
	// /status has no "coordinator" member.
	StatusReporter StatusReporter
	// LeaseHolderReporter names who holds a refused lease, for the log
	// line of a skipped run. nil: the line names no holder.
	LeaseHolderReporter LeaseHolderReporter
	// CompletionReader reads the fleet's last completed slot, so a cron
	// pipeline catches up the slots missed while every replica was down.
	// nil: nothing is caught up at start.
	CompletionReader CompletionReader
	// FleetController carries operators' pause and trigger commands. nil:
	// no pipeline is ever paused or triggered from outside.
	FleetController FleetController
	// ScheduleReporter receives every pipeline's schedule before Start,
	// for fleet tooling. nil: the schedules are not published.
	ScheduleReporter ScheduleReporter
	// InterruptedRerunner receives, before Start, the pipelines that re-run
	// an interrupted slot (ScheduledPipeline.RerunInterrupted). nil: the
	// setting has no effect.
	InterruptedRerunner InterruptedRerunner
	// RunRecorder gives a lease back and records its run in one step. nil:
	// the pool gives leases back with CompleteLease or ReleaseLease, and no
	// run history is kept by the coordinator.
	RunRecorder RunRecorder
	// RunHistoryReader reads the run history back, for tools. The pool
	// does not use it.
	RunHistoryReader RunHistoryReader
	// FailureSharer counts failed runs and backs off fleet-wide. nil: each
	// worker counts its own failures and backs off alone.
	FailureSharer FailureSharer
	// DeadlineReporter decides which worker of the fleet reports a slot
	// that missed its ScheduledPipeline.Deadline, so it is reported once.
	// nil: every worker reports each slot it does not know succeeded (by
	// its own runs and CompletionReader): once per worker, not per fleet.
	DeadlineReporter DeadlineReporter
	// SlotCompletionReader tells whether one slot of a pipeline completed,
	// which ScheduledPipeline.After waits for. nil: a pipeline with After
	// is refused before the pool starts.
	SlotCompletionReader SlotCompletionReader
	// DependencyReporter receives, before Start, the upstreams of every
	// pipeline that has After, for fleet tooling. nil: they are not
	// published, and fleet backfill --downstream finds no dependents.
	DependencyReporter DependencyReporter
	// Backfiller hands this worker the slots of the fleet's backfills
	// (fleet backfill, fleet trigger --slot). nil: backfills are not run by
	// this worker.
	Backfiller Backfiller
}

// DeadlineReporter is the optional capability (Capabilities) that reports
// each missed deadline once across a fleet (ScheduledPipeline.Deadline).
type DeadlineReporter interface {
	// MissedDeadline is asked once a slot (Unix seconds, the run number of
	// a cron or every slot) of pipelineID has passed its deadline. It
	// returns true to exactly one caller per pipeline and slot, and only
	// when the slot has not completed: false when the slot, or a later
	// one, completed (the slot rule), and when this slot or a later one
	// was already reported, so a worker that checks late reports a slot
	// nobody reported yet but never one older than the last reported.
	MissedDeadline(ctx context.Context, pipelineID string, slot int64) (report bool, err error)
}
