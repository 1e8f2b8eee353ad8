package engine

import (
	"log/slog"
	"time"
)

// paused reports whether the coordinator says r's pipeline is paused.
func (env *runEnv) paused(r *Runner) bool {
	return env.caps.FleetController != nil && env.caps.FleetController.Paused(r.id())
}

// Trigger starts the run a trigger asked for, beside the schedule;
// running says the pool is running (not starting or shutting down).
func (pr *Pool) Trigger(pipelineID string, params map[string]string, running bool) {
	r := pr.byPipeline(pipelineID)
	if r == nil {
		pr.env.logger.Warn("trigger for a pipeline this worker does not run; ignored", slog.String("pipeline_id", pipelineID))
		return
	}
	if !running || r.isStopped() {
		pr.env.logger.Warn("trigger while shutting down; not run", slog.String("pipeline_id", pipelineID))
		return
	}
	go r.triggered(pr.env, params)
}

// byPipeline returns the runner of pipelineID, or nil.
func (pr *Pool) byPipeline(pipelineID string) *Runner {
	pr.byIDOnce.Do(func() {
		pr.byID = make(map[string]*Runner, len(pr.runners))
		for _, r := range pr.runners {
			pr.byID[r.id()] = r
		}
	})
	return pr.byID[pipelineID]
}

// triggered makes the run a trigger asked for: one attempt numbered
// RunNumberAuto, asked again every Config.TriggerRetry while the lease is
// held elsewhere, for up to Config.TriggerPatience. The schedule's plan is left
// alone; the status counts the run like any other. params reach the run
// through ParamsFromContext.
func (r *Runner) triggered(env *runEnv, params map[string]string) {
	if len(params) > 0 {
		r.logRun(slog.LevelInfo, "run triggered", Lease{RunNumber: RunNumberAuto}, slog.String("params", FormatParams(params)))
	} else {
		r.logRun(slog.LevelInfo, "run triggered", Lease{RunNumber: RunNumberAuto})
	}
	giveUp := r.now().Add(env.triggerPatience)
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
				slog.Duration("waited", env.triggerPatience))
			return
		}
		t := env.clock.NewTimer(env.triggerRetry)
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
func (r *Runner) publishTriggered(o outcome, runErr error, end time.Time, state State, next int64) {
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
