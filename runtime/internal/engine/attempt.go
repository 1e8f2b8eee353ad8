package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/agora-etl/agora/internal/isnil"
	"github.com/agora-etl/agora/runtime/history"
)

// attempt takes the lease, runs the pipeline and gives the lease back. now
// is when the attempt was found due, due when the schedule planned it (Unix
// ns; 0 for retries and runs outside the schedule, which have no lateness),
// onDemand whether an operator asked for it (RunNow, a trigger) rather than
// the schedule; attempt returns when it ended.
func (r *Runner) attempt(runNumber int64, now time.Time, due int64, onDemand bool) (outcome, time.Time, error) {
	return r.attemptWith(runNumber, now, due, onDemand, nil)
}

// attemptWith is attempt for a run given params (ParamsFromContext, and
// the run's record in the history).
func (r *Runner) attemptWith(runNumber int64, now time.Time, due int64, onDemand bool, params map[string]string) (outcome, time.Time, error) {
	env := r.env
	// A remote coordinator may block: from asking for the lease to giving
	// it back this executor counts as busy. With leases in memory
	// (LocalLeaser) only the user's code does.
	remote := env.local == nil
	// The dispatcher's batch answers only the scheduled attempt; one asked
	// for now, beside the schedule, asks the coordinator itself.
	var pre *preAcquired
	if !onDemand {
		pre = r.pre
	}
	if !onDemand && ((pre != nil && pre.paused) || (pre == nil && env.paused(r))) {
		// A run asked for now (RunNow, a trigger) is the operator's
		// explicit request; the schedule honours the pause.
		r.logRun(slog.LevelDebug, "pipeline paused fleet-wide, skipping", Lease{RunNumber: runNumber})
		return outcomePaused, now, nil
	}
	if pre != nil && (!pre.ok || pre.err != nil) {
		// Refused in a batch already: nothing here blocks.
		return r.skipped(runNumber, pre.err), r.now(), pre.err
	}
	if remote {
		env.enterBusy()
		defer env.leaveBusy()
	}
	lease, ok, err := env.acquire(r, runNumber, now, pre)
	if err != nil || !ok {
		o := r.skipped(runNumber, err)
		if remote {
			now = r.now()
		}
		return o, now, err
	}
	if runNumber > 0 && lease.RunNumber > 0 && lease.RunNumber < runNumber {
		// The coordinator granted an earlier slot whose holder died before
		// completing it (RerunInterrupted); this attempt runs that slot.
		r.reran = true
		r.logRun(slog.LevelInfo, "re-running an interrupted slot before this one", lease, slog.Int64("asked_run_number", runNumber))
	}
	if r.isStopped() {
		// Stop came while the lease was being asked for; after Stop no run
		// starts, so the lease goes straight back.
		if relErr := env.finishLease(env.parent, r, false); relErr != nil {
			r.logRun(slog.LevelWarn, "releasing the lease failed", lease, slog.Any("error", relErr))
		}
		r.logRun(slog.LevelDebug, "stopped while asking for the lease; not running", lease)
		if remote {
			now = r.now()
		}
		return outcomeStopped, now, nil
	}

	span := r.startRunSpan(lease)
	ctx := newRunContext(env.runBase(span), lease, r)
	ctx.params = params
	start := now
	if remote {
		start = r.now() // asking took time
	}
	r.mu.Lock()
	before := r.st
	r.ctx = ctx
	r.st.state, r.st.next = StateRunning, 0
	r.st.since, r.st.runNumber, r.st.token = start.UnixNano(), lease.RunNumber, lease.FencingToken
	if lease.FencingToken != 0 {
		r.st.lastToken = lease.FencingToken
	}
	r.mu.Unlock()
	if !env.stillHeld(r, lease) {
		// Lost between the grant and now, while there was no run context
		// for the loss to cancel: nothing has run yet, so nothing runs.
		r.mu.Lock()
		r.ctx, r.st = nil, before
		r.mu.Unlock()
		r.logRun(slog.LevelWarn, "lease lost before the run started; not running", lease)
		endUnstartedRunSpan(span)
		return outcomeNotAcquired, r.now(), nil
	}
	if cause := env.cause(); cause != nil {
		ctx.cancel(cause)
	}
	r.logRun(slog.LevelDebug, "run started", lease)
	if due != 0 {
		env.observeLateness(r, start.Sub(timeOf(due)))
	}

	if !remote {
		env.enterBusy()
	}
	stopTimeout := r.watchTimeout(ctx)
	runErr := r.invoke(ctx)
	if timedOut := stopTimeout(); timedOut != nil && runErr == nil {
		// The run ignored its cancelled context and returned nil: it still
		// overran, so it failed.
		runErr = timedOut
	}
	if !remote {
		env.leaveBusy()
	}

	end := r.now()
	cancelCause := ctx.cancelled()
	if runErr != nil {
		runErr = redactedError{withCause(runErr, cancelCause)}
	}
	ctx.cancel(nil)
	// A run refused because its slot was completed by another run (the
	// database said so: fencing.ErrSlotDone wraps ErrSlotCompleted) ends
	// the slot as a completed one: the lease is completed, so the fleet
	// skips the slot too, and the slot is not retried.
	slotDone := runErr != nil && errors.Is(runErr, ErrSlotCompleted)
	records := ctx.records.snapshot()
	var relErr error
	if env.caps.RunRecorder != nil { // the local coordinator has one when given a history
		rec := history.Record{
			PipelineID: r.sp.PipelineID, RunNumber: lease.RunNumber, FencingToken: lease.FencingToken,
			WorkerID: lease.WorkerID, Start: start, End: end, Duration: end.Sub(start),
			Outcome: outcomeOf(runErr, cancelCause), Error: history.ErrorText(runErr), Records: records,
			Triggered: onDemand, Params: params,
		}
		if slotDone {
			rec.Outcome = history.OutcomeSlotDone
		}
		if env.local != nil {
			relErr = env.finishLease(ctx, r, runErr == nil || slotDone)
			r.local.Record(rec)
		} else {
			relErr = env.finishRun(ctx, rec)
		}
	} else {
		relErr = env.finishLease(ctx, r, runErr == nil || slotDone)
	}
	if relErr != nil {
		r.logRun(slog.LevelWarn, "releasing the lease failed", lease, slog.Any("error", relErr))
	}
	r.counted(runErr, cancelCause, records)
	env.observeDuration(r, end.Sub(start))
	r.ended(lease, runErr, end.Sub(start), records, ctx.records.counting.Load())
	if runErr != nil {
		r.notifyRunFailed(lease, runErr)
	}
	env.errs.endRunSpan(span, runErr, cancelCause, records)
	switch {
	case slotDone:
		return outcomeSlotDone, end, runErr
	case runErr != nil:
		return outcomeFailure, end, runErr
	}
	return outcomeSuccess, end, nil
}

// skipped classifies an attempt the coordinator did not grant.
func (r *Runner) skipped(runNumber int64, err error) outcome {
	failing, isFailing := r.env.failing(err)
	switch {
	case isFailing:
		// Refused for the fleet's failure state: not a coordinator fault.
		if failing.Stopped {
			return outcomeFleetStopped
		}
		r.logRun(slog.LevelDebug, "backing off fleet-wide after a failed run, skipping", Lease{RunNumber: runNumber},
			slog.Int("consecutive_errors", failing.Count), slog.Time("until", failing.Until))
		return outcomeBackingOff
	case errors.Is(err, ErrSlotCompleted):
		r.logRun(slog.LevelDebug, "slot already completed, skipping", Lease{RunNumber: runNumber})
		return outcomeSlotCompleted
	case err != nil:
		r.logRun(slog.LevelWarn, "cannot ask the coordinator for a lease; not running", Lease{RunNumber: runNumber}, slog.Any("error", err))
		return outcomeLeaseError
	default:
		r.heldElsewhere(runNumber)
		return outcomeNotAcquired
	}
}

// withCause adds to a run's error the reason the pool cancelled its context,
// when the error does not say so already.
func withCause(runErr, cause error) error {
	if cause != nil && !errors.Is(runErr, cause) && isPoolCause(cause) {
		return fmt.Errorf("%w (run context cancelled: %w)", runErr, cause)
	}
	return runErr
}

// isPoolCause reports whether cause is one the pool cancels runs with.
func isPoolCause(cause error) bool {
	return errors.Is(cause, ErrLeaseLost) || errors.Is(cause, ErrGracefulTimeout) || errors.Is(cause, ErrForcedShutdown) || errors.Is(cause, ErrRunTimeout)
}

// ended logs the end of a run, with its record counts when it moved any.
// A successful Continuous run that counts its records (counting) and moved
// none is logged at DEBUG: an idle stream polls again at once, and a line
// per poll at INFO would bury the runs that moved records.
func (r *Runner) ended(lease Lease, runErr error, took time.Duration, records history.RecordCounts, counting bool) {
	attrs := []slog.Attr{slog.Duration("duration", took)}
	if !records.IsZero() {
		attrs = append(attrs, recordAttrs(records)...)
	}
	if runErr != nil && errors.Is(runErr, ErrSlotCompleted) {
		r.logRun(slog.LevelWarn, "run refused: another run already completed this slot; moving on to the next slot", lease, append(attrs, slog.Any("error", runErr))...)
		return
	}
	if runErr != nil {
		r.logRun(slog.LevelError, "run failed", lease, append(attrs, slog.Any("error", runErr))...)
		return
	}
	level := slog.LevelInfo
	if counting && records.IsZero() && r.sp.Schedule.Kind() == ScheduleContinuous {
		level = slog.LevelDebug
	}
	r.logRun(level, "run finished", lease, attrs...)
}

// invoke calls the factory, runs the pipeline and closes it, turning panics
// into errors.
func (r *Runner) invoke(ctx context.Context) (err error) { return r.invokeChecked(ctx, nil) }

// invokeChecked is invoke with check, when not nil, asked about the built
// pipeline before its Run: an error from check is the run's, and the
// pipeline is closed without running.
func (r *Runner) invokeChecked(ctx context.Context, check func(Pipeline) error) (err error) {
	p, err := r.build(ctx)
	if err != nil {
		return err
	}
	if check != nil {
		err = check(p)
	}
	if err == nil {
		err = r.run(ctx, p)
	}
	if c, ok := p.(io.Closer); ok {
		if cerr := r.close(ctx, c); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return err
}

func (r *Runner) build(ctx context.Context) (p Pipeline, err error) {
	defer r.recoverInto(ctx, "factory", &err)
	p, err = r.sp.Factory.Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("factory: %w", err)
	}
	if isnil.Value(p) {
		return nil, ErrNilPipeline
	}
	return p, nil
}

func (r *Runner) run(ctx context.Context, p Pipeline) (err error) {
	defer r.recoverInto(ctx, "Run", &err)
	return p.Run(ctx)
}

func (r *Runner) close(ctx context.Context, c io.Closer) (err error) {
	defer r.recoverInto(ctx, "Close", &err)
	if err = c.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

func (r *Runner) recoverInto(ctx context.Context, where string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	stack := debug.Stack()
	*err = r.env.errs.panicked(where, v, stack)
	lease, _ := LeaseFromContext(ctx)
	r.logRun(slog.LevelError, "pipeline panicked", lease, slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(stack)))
}
