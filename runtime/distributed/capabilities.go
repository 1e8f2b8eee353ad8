package distributed

import "github.com/agora-etl/agora/runtime"

// Capabilities returns everything the Redis coordinator does beyond
// runtime.Coordinator's methods: it decides leases in batches (spread over
// the fleet by preferred workers, and asked ahead of cron slots on one
// Redis), reports health, status and lease holders, reads the last
// completed slots for catch-up, carries fleet commands and schedules,
// re-runs interrupted slots, keeps a run history, and counts failed runs
// and backs off fleet-wide, and tells whether a slot completed for the
// pipelines that wait for their upstreams.
func (c *RedisWorkerCoordinator) Capabilities() runtime.Capabilities {
	return runtime.Capabilities{
		FailureSharer:       c,
		BatchLeaser:         c,
		LeaseDeferrer:       c,
		LeaseAheader:        c,
		HealthReporter:      c,
		StatusReporter:      c,
		LeaseHolderReporter: c,
		CompletionReader:    c,
		FleetController:     c,
		ScheduleReporter:    c,
		InterruptedRerunner: c,
		RunRecorder:         c,
		RunHistoryReader:    c,
		DeadlineReporter:    c,

		SlotCompletionReader: c,
		Backfiller:           c,
		DependencyReporter:   c,
	}
}
