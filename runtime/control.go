package runtime

import (
	"log/slog"
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

// paused reports whether the coordinator says r's pipeline is paused.
func (env *runEnv) paused(r *runner) bool {
	return env.caps.FleetController != nil && env.caps.FleetController.Paused(r.id())
}

// onTrigger starts the run a trigger asked for, beside the schedule.
func (pr *poolRun) onTrigger(t Trigger) {
	pipelineID := t.PipelineID
	r := pr.runner(pipelineID)
	if r == nil {
		pr.env.logger.Warn("trigger for a pipeline this worker does not run; ignored", slog.String("pipeline_id", pipelineID))
		return
	}
	if pr.state.Load() != poolRunning || r.isStopped() {
		pr.env.logger.Warn("trigger while shutting down; not run", slog.String("pipeline_id", pipelineID))
		return
	}
	go r.triggered(pr.env, t.Params)
}

// runner returns the runner of pipelineID, or nil.
func (pr *poolRun) runner(pipelineID string) *runner {
	pr.byIDOnce.Do(func() {
		pr.byID = make(map[string]*runner, len(pr.runners))
		for _, r := range pr.runners {
			pr.byID[r.id()] = r
		}
	})
	return pr.byID[pipelineID]
}

// triggered makes the run a trigger asked for: one attempt numbered
// RunNumberAuto, asked again every TriggerRetryInterval while the lease is
// held elsewhere, for up to triggerPatience. The schedule's plan is left
// alone; the status counts the run like any other. params reach the run
// through ParamsFromContext.
func (r *runner) triggered(env *runEnv, params map[string]string) {
	if len(params) > 0 {
		r.logRun(slog.LevelInfo, "run triggered", Lease{RunNumber: RunNumberAuto}, slog.String("params", FormatParams(params)))
	} else {
		r.logRun(slog.LevelInfo, "run triggered", Lease{RunNumber: RunNumberAuto})
	}
	giveUp := r.now().Add(triggerPatience)
	for {
		r.mu.Lock()
		state, next := r.st.state, r.st.next
		r.mu.Unlock()
		// Counted as an attempt in flight, so a graceful shutdown waits
		// for it; the waits between attempts are not.
		env.d.running.Add(1)
		o, end, runErr := r.attemptWith(RunNumberAuto, r.now(), 0, true, params)
		r.publishTriggered(o, runErr, end, state, next)
		env.d.attemptDone()
		switch o {
		case outcomeNotAcquired:
		case outcomeLeaseError:
		case outcomeBackingOff: // the trigger runs once the fleet's backoff ends
		default:
			return
		}
		if !r.now().Before(giveUp) || r.isStopped() {
			r.logRun(slog.LevelWarn, "triggered run given up: the lease stayed unavailable", Lease{RunNumber: RunNumberAuto},
				slog.Duration("waited", triggerPatience))
			return
		}
		t := env.clock.NewTimer(TriggerRetryInterval)
		select {
		case <-t.C():
		case <-r.stopChan():
			t.Stop()
			return
		}
	}
}

// publishTriggered records a triggered attempt in the status without
// touching the schedule's plan: the state and next run the pipeline had
// before are put back unless its scheduler published meanwhile.
func (r *runner) publishTriggered(o outcome, runErr error, end time.Time, state PipelineState, next int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o {
	case outcomeSuccess, outcomeFailure, outcomeSlotDone:
		r.ctx = nil
		r.st.runs++
		r.st.lastStart, r.st.since = r.st.since, 0
		r.st.lastEnd = end.UnixNano()
		r.st.lastRun, r.st.lastRunTok, r.st.lastOutcome = r.st.runNumber, r.st.token, o
		r.st.runNumber, r.st.token = 0, 0
		if r.rare != nil {
			r.rare.lastErr = ""
		}
		if runErr != nil {
			rs := r.rareLocked()
			if o == outcomeSlotDone {
				rs.skipped++
				rs.skippedDone++
			} else {
				rs.failures++
			}
			rs.lastErr = runErr.Error()
		}
		if r.st.state == StateRunning {
			r.st.state, r.st.next = state, next
		}
	case outcomeLeaseError:
		r.rareLocked().leaseErrors++
	case outcomeNotAcquired:
		rs := r.rareLocked()
		rs.skipped++
		rs.skippedHeld++
	}
}
