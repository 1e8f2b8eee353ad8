package engine

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/notify"
)

// runEnv is what the runners of one Pool share.
type runEnv struct {
	clock    Clock
	coord    Coordinator
	caps     Capabilities // coord's, read once
	local    LocalLeaser  // caps.LocalLeaser: leases in memory, no context or timeout needed
	logger   *slog.Logger
	observer RunObserver // nil: runs are timed by nobody
	d        *dispatcher // nil for RunNow
	tracing  runTracing
	notifier notify.Notifier // nil: none
	workerID string
	errs     Errors // what the engine reads of runtime's error types
	// triggerRetry and triggerPatience are Config's.
	triggerRetry, triggerPatience time.Duration
	// parent is the parent of every run context. The pool passes a parent
	// that is never cancelled and cancels runs one by one.
	parent context.Context
	// hardCause, once set, is the cause every run context is cancelled with;
	// runs starting afterwards are cancelled at once.
	hardCause atomic.Pointer[error]
	// hard is cancelled with hardCause; lease requests in flight use it.
	hard       context.Context
	cancelHard context.CancelCauseFunc
}

func newRunEnv(cfg Config) *runEnv {
	env := &runEnv{clock: cfg.Clock, coord: cfg.Coordinator, caps: cfg.Capabilities, logger: cfg.Logger,
		observer: cfg.Observer, notifier: cfg.Notifier, workerID: cfg.WorkerID, errs: cfg.Errors, parent: cfg.Parent}
	env.tracing.provider, env.tracing.workerID = cfg.TracerProvider, cfg.WorkerID
	env.triggerRetry, env.triggerPatience = cfg.TriggerRetry, cfg.TriggerPatience
	env.local = env.caps.LocalLeaser
	env.hard, env.cancelHard = context.WithCancelCause(cfg.Parent)
	return env
}

// failing reports whether err is a refusal for the fleet's failure state,
// and that state (runtime.FailingError, through Errors.Failing).
func (env *runEnv) failing(err error) (FailureState, bool) {
	if err == nil || env.errs.Failing == nil {
		return FailureState{}, false
	}
	return env.errs.Failing(err)
}

// cancelAll makes cause the cause of every run from now on and cancels
// lease requests in flight; the caller cancels the runs in flight.
func (env *runEnv) cancelAll(cause error) {
	env.hardCause.Store(&cause)
	env.cancelHard(cause)
}

// now reads the clock without its monotonic part, so every comparison is on
// the wall clock that cron slots and run numbers are named by.
func (env *runEnv) now() time.Time { return env.clock.Now().Round(0) }

// enterBusy and leaveBusy bracket code that may block for long; see
// dispatcher.enterBusy. Without a dispatcher (RunNow) there is nobody to
// tell.
func (env *runEnv) enterBusy() {
	if env.d != nil {
		env.d.enterBusy()
	}
}

func (env *runEnv) leaveBusy() {
	if env.d != nil {
		env.d.leaveBusy()
	}
}

func (env *runEnv) cause() error {
	if p := env.hardCause.Load(); p != nil {
		return *p
	}
	return nil
}

// acquire takes the lease of r's attempt; pre, when not nil, is the answer
// the dispatcher's batch already got for it.
func (env *runEnv) acquire(r *Runner, runNumber int64, now time.Time, pre *preAcquired) (Lease, bool, error) {
	id := r.sp.PipelineID
	if env.local != nil {
		if r.local == nil {
			r.local = env.local.LocalLeases(id)
		}
		return r.local.Acquire(seamRun(runNumber), now)
	}
	if pre != nil {
		// Granted in a batch (refusals never get here).
		r.pre = nil
	} else {
		ctx, cancel := context.WithTimeout(env.hard, leaseAcquireTimeout)
		ok, err := env.coord.TryAcquireLease(ctx, id, seamRun(runNumber))
		cancel()
		if !ok || err != nil {
			return Lease{}, false, err
		}
	}
	lease, held := env.coord.CurrentLease(id)
	if !held {
		// Granted, then lost before the run could start (a renewal
		// deadline, another worker taking over): running now would run
		// without a lease, and with no run yet the loss cancelled nothing.
		r.logRun(slog.LevelWarn, "lease lost right after it was granted; not running", Lease{RunNumber: runNumber})
		return Lease{}, false, nil
	}
	return lease, true, nil
}

// stillHeld reports whether the coordinator still holds lease for r. The
// run checks it once its context is in place: a loss reported before that
// found no run to cancel.
func (env *runEnv) stillHeld(r *Runner, lease Lease) bool {
	if env.local != nil {
		return true // local leases are never lost
	}
	now, held := env.coord.CurrentLease(r.sp.PipelineID)
	return held && now.FencingToken == lease.FencingToken
}

// finishLease releases the lease, or completes it after a success, with a
// context that shutdown does not cancel and a bounded timeout.
func (env *runEnv) finishLease(runCtx context.Context, r *Runner, success bool) error {
	if env.local != nil {
		r.local.Release(success)
		return nil
	}
	id := r.sp.PipelineID
	ctx, cancel := context.WithTimeout(context.WithoutCancel(runCtx), leaseReleaseTimeout)
	defer cancel()
	if success {
		return env.coord.CompleteLease(ctx, id)
	}
	return env.coord.ReleaseLease(ctx, id)
}

// finishRun gives the lease back and records the run, in one step, with
// the same context rules as finishLease.
func (env *runEnv) finishRun(runCtx context.Context, rec history.Record) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(runCtx), leaseReleaseTimeout)
	defer cancel()
	return env.caps.RunRecorder.FinishRun(ctx, rec)
}
