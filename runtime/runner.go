package runtime

import "github.com/agora-etl/agora/runtime/internal/engine"

// The runner that makes a pipeline's attempts lives in internal/engine;
// its timing rules are part of runtime's contract.

// Timing rules shared by ScheduledPipeline.Start and WorkerPool.
const (
	// LateSlotGrace is how late a cron slot may start and still run. A slot
	// found more than this late (the previous run overran it, the process was
	// paused or suspended, the wall clock jumped forward) is skipped, counted
	// in MissedSlots and logged (a warning a minute at most); when several
	// slots were missed only the newest one within the grace runs, so a
	// pipeline never runs a burst of catch-up runs.
	LateSlotGrace = engine.LateSlotGrace
	// LeaseRetryInterval is how soon a Continuous or Once pipeline asks the
	// coordinator again after it did not get the lease or could not ask.
	// Cron and Every pipelines try again at their next slot instead.
	LeaseRetryInterval = engine.LeaseRetryInterval
)
