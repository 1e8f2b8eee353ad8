package runtime

import (
	"slices"
	"time"
)

// FleetController is the capability (Capabilities.FleetController) of
// coordinators that carry operators' fleet-wide commands
// (distributed.RedisWorkerCoordinator does, fed by "fleet pause", "fleet
// resume" and "fleet trigger"):
//
//   - a paused pipeline is not attempted: before asking for a lease the pool
//     asks Paused, and a paused attempt is skipped (reason paused in /status
//     and /metrics) and planned again as if another replica had run it. A run
//     in flight when the pause arrives finishes.
//   - a trigger asks for one run now: the coordinator calls the trigger
//     handler on exactly one replica, and the pool runs the pipeline once
//     at once, under a lease numbered RunNumberAuto, beside its schedule.
type FleetController interface {
	// Paused reports whether pipelineID is paused fleet-wide. It is asked
	// before every attempt, so it must answer from memory, without I/O.
	Paused(pipelineID string) bool
	// SetTriggerHandler sets the function called when this replica has
	// claimed a run-now request (which pipeline, with which parameters). It
	// must return quickly.
	SetTriggerHandler(handler func(Trigger))
}

// ScheduleReporter is the capability (Capabilities.ScheduleReporter) of
// coordinators that publish each pipeline's schedule for fleet tooling (the
// worker record that "fleet pipelines" reads). The pool calls SetSchedules
// before Start, with Schedule.String of every pipeline by id.
type ScheduleReporter interface {
	SetSchedules(schedules map[string]string)
}

// DependencyReporter is the capability (Capabilities.DependencyReporter)
// of coordinators that publish which pipelines wait for which
// (ScheduledPipeline.After), for fleet tooling: fleet backfill
// --downstream finds a pipeline's dependents there. The pool calls
// SetDependencies before Start with the pipelines that have After, by id.
type DependencyReporter interface {
	SetDependencies(after map[string][]string)
}

// InterruptedRerunner is the capability (Capabilities.InterruptedRerunner)
// of coordinators that can tell a pipeline's worker, when it takes over the
// lease of a holder that died, which earlier slot that holder left
// unfinished, and grant that slot instead (see
// ScheduledPipeline.RerunInterrupted). The pool calls SetRerunInterrupted
// before Start with the ids of the pipelines that ask for it.
type InterruptedRerunner interface {
	SetRerunInterrupted(pipelineIDs []string)
}

// reportSchedules hands the coordinator whose capabilities are caps the
// pipelines' schedules when it wants them, the pipelines that re-run
// interrupted slots, and the pipelines' failure rules.
func reportSchedules(caps Capabilities, pipelines []*ScheduledPipeline) {
	if rr := caps.InterruptedRerunner; rr != nil {
		var ids []string
		for _, sp := range pipelines {
			if sp.RerunInterrupted {
				ids = append(ids, sp.PipelineID)
			}
		}
		rr.SetRerunInterrupted(ids)
	}
	if fs := caps.FailureSharer; fs != nil {
		fs.ShareFailures(failureRules(pipelines))
	}
	if dr := caps.DependencyReporter; dr != nil {
		after := map[string][]string{}
		for _, sp := range pipelines {
			if len(sp.After) > 0 {
				after[sp.PipelineID] = slices.Clone(sp.After)
			}
		}
		dr.SetDependencies(after)
	}
	sr := caps.ScheduleReporter
	if sr == nil {
		return
	}
	m := make(map[string]string, len(pipelines))
	for _, sp := range pipelines {
		m[sp.PipelineID] = sp.Schedule.String()
	}
	sr.SetSchedules(m)
}

// Triggered runs are retried this long while another replica holds the
// pipeline's lease, then given up with a warning.
const (
	// TriggerRetryInterval is how often a claimed trigger asks for the lease
	// again while it is held elsewhere.
	TriggerRetryInterval = time.Second
	// triggerPatience bounds how long a claimed trigger waits for the lease.
	triggerPatience = 10 * time.Minute
)
