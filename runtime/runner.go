package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Timing rules shared by ScheduledPipeline.Start and WorkerPool.
const (
	// LateSlotGrace is how late a cron slot may start and still run. A slot
	// found more than this late (the previous run overran it, the process was
	// paused or suspended, the wall clock jumped forward) is skipped with a
	// warning and counted in MissedSlots; when several slots were missed only
	// the newest one within the grace runs, so a pipeline never runs a burst
	// of catch-up runs.
	LateSlotGrace = time.Minute
	// LeaseRetryInterval is how soon a Continuous or Once pipeline asks the
	// coordinator again after it did not get the lease or could not ask.
	// Cron and Every pipelines try again at their next slot instead.
	LeaseRetryInterval = time.Second
	// LeaseReleaseTimeout bounds releasing or completing a lease after a run;
	// the release uses a context that is not cancelled by shutdown.
	LeaseReleaseTimeout = 5 * time.Second
	// MaxWait caps every sleep of a scheduler, so a wall-clock jump or a
	// suspend is noticed within a second.
	MaxWait = time.Second
)

// maxMissedScan bounds how many missed cron slots are walked one by one;
// beyond it the count is reported as a lower bound.
const maxMissedScan = 100

// outcome is how one attempt ended.
type outcome uint8

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeNotAcquired
	outcomeSlotCompleted
	outcomeLeaseError
)

// control is the stop switch of one Start or pool Run of a pipeline. Its
// channel doubles as the run's ShutdownRequested channel, so a looping
// pipeline learns of Stop as well as of a pool shutdown.
type control struct {
	stopCh chan struct{}
	once   sync.Once
	onStop func()
}

func newControl() *control { return &control{stopCh: make(chan struct{})} }

func (c *control) stop() {
	c.once.Do(func() {
		close(c.stopCh)
		if c.onStop != nil {
			c.onStop()
		}
	})
}

func (c *control) stopped() bool {
	select {
	case <-c.stopCh:
		return true
	default:
		return false
	}
}

// runEnv is what the runners of one Start or one pool Run share.
type runEnv struct {
	coord     Coordinator
	local     *LocalCoordinator // set when coord is one: no context or timeout needed
	completer RunCompleter
	logger    *slog.Logger
	// parent is the parent of every run context. The pool passes a parent
	// that is never cancelled and cancels runs one by one.
	parent context.Context
	// hardCause, once set, is the cause every run context is cancelled with;
	// runs starting afterwards are cancelled at once.
	hardCause atomic.Pointer[error]
}

func newRunEnv(coord Coordinator, logger *slog.Logger, parent context.Context) *runEnv {
	env := &runEnv{coord: coord, logger: logger, parent: parent}
	env.local, _ = coord.(*LocalCoordinator)
	env.completer, _ = coord.(RunCompleter)
	return env
}

func (env *runEnv) cause() error {
	if p := env.hardCause.Load(); p != nil {
		return *p
	}
	return nil
}

func (env *runEnv) acquire(ctx context.Context, id string, runNumber int64) (Lease, bool, error) {
	if env.local != nil {
		return env.local.acquire(id, runNumber)
	}
	ok, err := env.coord.TryAcquireLease(ctx, id, runNumber)
	if !ok || err != nil {
		return Lease{}, false, err
	}
	lease, held := env.coord.CurrentLease(id)
	if !held {
		// The coordinator granted the lease but cannot show it; run with
		// what is known rather than not at all.
		lease = Lease{PipelineID: id, RunNumber: runNumber}
	}
	return lease, true, nil
}

// finishLease releases the lease, or completes it after a success, with a
// context that shutdown does not cancel and a bounded timeout.
func (env *runEnv) finishLease(runCtx context.Context, id string, success bool) error {
	if env.local != nil {
		env.local.release(id, success)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(runCtx), LeaseReleaseTimeout)
	defer cancel()
	if success && env.completer != nil {
		return env.completer.CompleteLease(ctx, id)
	}
	return env.coord.ReleaseLease(ctx, id)
}

// runner holds the schedule state of one pipeline and performs its runs. The
// same runner code serves ScheduledPipeline.Start, which drives it from one
// goroutine, and WorkerPool, whose dispatcher drives many from a timer heap.
// Plan fields are touched only by the runner's current driver (the Start
// loop, the dispatcher while the runner is in the heap, or the run goroutine
// while it is not); handing over through the heap lock orders the accesses.
type runner struct {
	sp        *ScheduledPipeline
	id        string
	sched     Schedule
	clock     Clock
	env       *runEnv
	ctl       *control
	backoff   time.Duration
	maxErrors int

	// plan
	next     time.Time // when the next attempt is due
	slot     time.Time // cron: the slot a retry attempts again
	retry    bool      // the next attempt retries slot after a failure
	failures int       // consecutive failed runs
	lastErr  error
	lastSeen time.Time // latest clock reading, to notice backward jumps

	// dispatcher bookkeeping, guarded by the dispatcher's lock
	heapIdx int
	due     int64
	done    bool

	mu     sync.Mutex // guards the fields below
	st     PipelineStatus
	cancel context.CancelCauseFunc
	lease  Lease
}

func newRunner(sp *ScheduledPipeline, env *runEnv, clock Clock, ctl *control) *runner {
	r := &runner{
		sp:        sp,
		id:        sp.PipelineID,
		sched:     sp.Schedule,
		clock:     clock,
		env:       env,
		ctl:       ctl,
		backoff:   sp.ErrorBackoff,
		maxErrors: sp.MaxConsecutiveErrors,
		heapIdx:   -1,
	}
	if r.backoff <= 0 {
		r.backoff = DefaultErrorBackoff
	}
	r.st.State = StateIdle
	return r
}

// now reads the clock without its monotonic part, so every comparison is on
// the wall clock that cron slots and run numbers are named by.
func (r *runner) now() time.Time { return r.clock.Now().Round(0) }

// begin sets the first attempt: cron at its next slot, every other kind at
// once (an Every pipeline runs at start, then Every after each run).
func (r *runner) begin(now time.Time) {
	r.lastSeen = now
	if r.sched.kind == ScheduleCron {
		r.next = r.sched.Next(now)
	} else {
		r.next = now
	}
	r.setNext(StateIdle)
	if r.next.IsZero() {
		r.env.logger.Warn("schedule never fires; the pipeline will stay idle", slog.String("pipeline_id", r.id), slog.String("schedule", r.sched.String()))
	}
}

// observe notices a backward wall-clock jump and shifts the plan for it.
func (r *runner) observe(now time.Time) (changed bool) {
	back := r.lastSeen.Sub(now)
	r.lastSeen = now
	if back <= 0 {
		return false
	}
	return r.shift(back)
}

// shift moves a wait that measures a duration (an Every interval, a
// backoff, a lease retry) back by a backward wall-clock jump of d, so the
// jump neither lengthens nor repeats it. A cron slot keeps its wall-clock
// time, so after a jump back no slot runs twice; the pipeline just waits for
// the clock to reach its next slot again.
func (r *runner) shift(d time.Duration) bool {
	if r.next.IsZero() || (r.sched.kind == ScheduleCron && !r.retry) {
		return false
	}
	r.next = r.next.Add(-d)
	r.setNext(r.stateOf())
	return true
}

// stateOf is the waiting state: backoff after a failure, idle otherwise.
func (r *runner) stateOf() PipelineState {
	if r.failures > 0 {
		return StateBackoff
	}
	return StateIdle
}

// step makes the attempt due at now, if one is still worth making, and
// plans the next. It reports done when the pipeline must not run again, with
// the error it stops with.
func (r *runner) step(now time.Time) (done bool, err error) {
	r.lastSeen = now
	runNumber, run := r.decide(now)
	if !run {
		return false, nil
	}
	o, runErr := r.attempt(runNumber)
	return r.plan(o, runErr, r.now())
}

// decide returns the run number of the attempt due at now. For cron it
// applies LateSlotGrace: it may skip missed slots, or move on to the next
// slot without running.
func (r *runner) decide(now time.Time) (int64, bool) {
	switch r.sched.kind {
	case ScheduleEvery:
		return everyRunNumber(now, r.sched.every), true
	case ScheduleContinuous:
		return RunNumberAuto, true
	case ScheduleOnce:
		return RunNumberOnce, true
	}
	if r.retry {
		return r.slot.Unix(), true
	}
	latest, missed, exact := r.latestSlot(r.next, now)
	if now.Sub(latest) > LateSlotGrace {
		missed++
		r.next = r.sched.Next(now)
		r.reportMissed(missed, exact, time.Time{})
		r.setNext(r.stateOf())
		return 0, false
	}
	if missed > 0 {
		r.reportMissed(missed, exact, latest)
	}
	r.slot = latest
	return latest.Unix(), true
}

// latestSlot walks from the due slot s to the newest slot not after now and
// counts the slots passed over. Past maxMissedScan slots it restarts from
// the grace window and reports the count as a lower bound.
func (r *runner) latestSlot(s, now time.Time) (latest time.Time, missed uint64, exact bool) {
	latest = s
	for range maxMissedScan {
		n := r.sched.Next(latest)
		if n.IsZero() || n.After(now) {
			return latest, missed, true
		}
		latest, missed = n, missed+1
	}
	from := now.Add(-LateSlotGrace)
	if latest.Before(from) {
		c := r.sched.Next(from.Add(-time.Second))
		for !c.IsZero() && c.Before(from) {
			c = r.sched.Next(c)
		}
		if c.IsZero() || c.After(now) {
			return latest, missed, false
		}
		latest = c
	}
	for n := r.sched.Next(latest); !n.IsZero() && !n.After(now); n = r.sched.Next(latest) {
		latest = n
	}
	return latest, missed, false
}

func (r *runner) reportMissed(n uint64, exact bool, running time.Time) {
	r.mu.Lock()
	r.st.MissedSlots += n
	r.mu.Unlock()
	attrs := []slog.Attr{slog.String("pipeline_id", r.id), slog.Uint64("missed_slots", n), slog.Bool("exact_count", exact)}
	if !running.IsZero() {
		attrs = append(attrs, slog.Int64("run_number", running.Unix()))
	}
	r.env.logger.LogAttrs(context.Background(), slog.LevelWarn,
		"cron slots missed: more than the late-slot grace behind (a previous run overran them, the process was paused, or the clock jumped)",
		attrs...)
}

// everyRunNumber names the interval window now falls in by its start in
// Unix seconds. Intervals under a second cannot be told apart in seconds, so
// they are numbered by the coordinator, like Continuous.
func everyRunNumber(now time.Time, d time.Duration) int64 {
	if d < time.Second {
		return RunNumberAuto
	}
	n := now.UnixNano()
	start := n - n%int64(d)
	if n < 0 && n%int64(d) != 0 {
		start -= int64(d)
	}
	return start / int64(time.Second)
}

// attempt takes the lease, runs the pipeline and gives the lease back.
func (r *runner) attempt(runNumber int64) (outcome, error) {
	env := r.env
	lease, ok, err := env.acquire(env.parent, r.id, runNumber)
	switch {
	case errors.Is(err, ErrSlotCompleted):
		r.countSkip(false)
		r.debug("slot already completed, skipping", runNumber)
		return outcomeSlotCompleted, nil
	case err != nil:
		r.countSkip(true)
		env.logger.LogAttrs(context.Background(), slog.LevelWarn, "cannot ask the coordinator for a lease; not running",
			slog.String("pipeline_id", r.id), slog.Int64("run_number", runNumber), slog.Any("error", err))
		return outcomeLeaseError, err
	case !ok:
		r.countSkip(false)
		r.debug("lease held elsewhere, skipping", runNumber)
		return outcomeNotAcquired, nil
	}

	ctx, cancel := newRunContext(env.parent, lease, r.ctl.stopCh)
	start := r.now()
	r.mu.Lock()
	r.cancel, r.lease = cancel, lease
	r.st.State, r.st.NextRun = StateRunning, nil
	r.st.LastRunStart, r.st.RunNumber, r.st.LeaseToken = timePtr(start), lease.RunNumber, lease.FencingToken
	r.mu.Unlock()
	if cause := env.cause(); cause != nil {
		cancel(cause)
	}
	if r.enabled(slog.LevelDebug) {
		r.logRun(slog.LevelDebug, "run started", lease)
	}

	runErr := r.invoke(ctx)

	end := r.now()
	r.mu.Lock()
	r.cancel = nil
	r.lease = Lease{}
	r.mu.Unlock()
	cause := context.Cause(ctx)
	cancel(nil)
	if runErr != nil && cause != nil && !errors.Is(runErr, cause) && (errors.Is(cause, ErrLeaseLost) || errors.Is(cause, ErrGracefulTimeout) || errors.Is(cause, ErrForcedShutdown)) {
		runErr = fmt.Errorf("%w (run context cancelled: %w)", runErr, cause)
	}

	if relErr := env.finishLease(ctx, r.id, runErr == nil); relErr != nil {
		r.logRun(slog.LevelWarn, "releasing the lease failed", lease, slog.Any("error", relErr))
	}

	r.mu.Lock()
	r.st.Runs++
	r.st.LastRunEnd = timePtr(end)
	r.st.RunNumber, r.st.LeaseToken = 0, 0
	if runErr != nil {
		r.st.Failures++
		r.st.LastError = runErr.Error()
	} else {
		r.st.LastError = ""
	}
	r.mu.Unlock()

	if runErr != nil {
		r.logRun(slog.LevelError, "run failed", lease, slog.Duration("duration", end.Sub(start)), slog.Any("error", runErr))
		return outcomeFailure, runErr
	}
	if r.enabled(slog.LevelInfo) {
		r.logRun(slog.LevelInfo, "run finished", lease, slog.Duration("duration", end.Sub(start)))
	}
	return outcomeSuccess, nil
}

// invoke calls the factory, runs the pipeline and closes it, turning panics
// into errors.
func (r *runner) invoke(ctx context.Context) (err error) {
	p, err := r.build(ctx)
	if err != nil {
		return err
	}
	err = r.run(ctx, p)
	if c, ok := p.(io.Closer); ok {
		if cerr := r.close(ctx, c); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return err
}

func (r *runner) build(ctx context.Context) (p Pipeline, err error) {
	defer r.recoverInto(ctx, "factory", &err)
	p, err = r.sp.Factory(ctx)
	if err != nil {
		return nil, fmt.Errorf("factory: %w", err)
	}
	if isNilPipeline(p) {
		return nil, ErrNilPipeline
	}
	return p, nil
}

func (r *runner) run(ctx context.Context, p Pipeline) (err error) {
	defer r.recoverInto(ctx, "Run", &err)
	return p.Run(ctx)
}

func (r *runner) close(ctx context.Context, c io.Closer) (err error) {
	defer r.recoverInto(ctx, "Close", &err)
	if err = c.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// PanicError is the error of a run whose factory, Run or Close panicked.
type PanicError struct {
	// Where is "factory", "Run" or "Close".
	Where string
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

// Error describes the panic without the stack, which is logged separately.
func (e *PanicError) Error() string { return fmt.Sprintf("panic in %s: %v", e.Where, e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func (r *runner) recoverInto(ctx context.Context, where string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	pe := &PanicError{Where: where, Value: v, Stack: debug.Stack()}
	*err = pe
	lease, _ := LeaseFromContext(ctx)
	r.logRun(slog.LevelError, "pipeline panicked", lease, slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(pe.Stack)))
}

func (r *runner) countSkip(leaseError bool) {
	r.mu.Lock()
	if leaseError {
		r.st.LeaseErrors++
	} else {
		r.st.Skipped++
	}
	r.mu.Unlock()
}

// plan sets the next attempt after an attempt that ended at now.
func (r *runner) plan(o outcome, runErr error, now time.Time) (done bool, err error) {
	r.lastSeen = now
	kind := r.sched.kind
	switch o {
	case outcomeSuccess:
		r.failures, r.lastErr, r.retry = 0, nil, false
		r.setFailures(0)
		switch kind {
		case ScheduleOnce:
			return true, nil
		case ScheduleCron:
			r.next = r.sched.Next(r.slot)
		case ScheduleEvery:
			r.next = now.Add(r.sched.every)
		default:
			r.next = now
		}
		r.setNext(StateIdle)
		return false, nil

	case outcomeFailure:
		r.failures++
		r.lastErr = runErr
		r.setFailures(r.failures)
		if r.maxErrors > 0 && r.failures >= r.maxErrors {
			return true, &tooManyErrors{id: r.id, failures: r.failures, last: runErr}
		}
		delay := backoffDelay(r.backoff, r.failures)
		retryAt := now.Add(delay)
		r.next = retryAt
		if kind == ScheduleCron {
			// Retry the failed slot unless its successor comes first; then
			// the successor (the first slot after the backoff) runs instead.
			if following := r.sched.Next(r.slot); following.IsZero() || following.After(retryAt) {
				r.retry = true
			} else {
				r.retry = false
				r.next = r.sched.Next(retryAt.Add(-time.Nanosecond))
			}
		}
		r.logBackoff(delay, retryAt)
		r.setNext(StateBackoff)
		return false, nil

	case outcomeSlotCompleted:
		if kind == ScheduleOnce {
			return true, nil
		}
	}
	// Not run here: another worker has it, it already ran, or the
	// coordinator could not be asked. Try again at the next slot.
	r.retry = false
	switch kind {
	case ScheduleCron:
		r.next = r.sched.Next(r.slot)
	case ScheduleEvery:
		r.next = now.Add(r.sched.every)
	default:
		r.next = now.Add(LeaseRetryInterval)
	}
	r.setNext(r.stateOf())
	return false, nil
}

func (r *runner) logBackoff(delay time.Duration, retryAt time.Time) {
	if !r.enabled(slog.LevelInfo) {
		return
	}
	r.env.logger.LogAttrs(context.Background(), slog.LevelInfo, "backing off after a failed run",
		slog.String("pipeline_id", r.id), slog.Int("consecutive_errors", r.failures),
		slog.Duration("backoff", delay), slog.Time("next_attempt", r.next), slog.Time("retry_at", retryAt))
}

func (r *runner) setFailures(n int) {
	r.mu.Lock()
	r.st.ConsecutiveErrors = n
	r.mu.Unlock()
}

func (r *runner) setNext(state PipelineState) {
	r.mu.Lock()
	r.st.State = state
	r.st.NextRun = timePtr(r.next)
	r.mu.Unlock()
}

func (r *runner) setStopped() {
	r.mu.Lock()
	r.st.State = StateStopped
	r.st.NextRun = nil
	r.mu.Unlock()
}

// cancelRun cancels the run in flight, if any, with cause. With a non-zero
// token only a run holding that fencing token is cancelled, so a late report
// about an earlier run cannot cancel a newer one.
func (r *runner) cancelRun(cause error, token int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel == nil || (token != 0 && r.lease.FencingToken != 0 && token != r.lease.FencingToken) {
		return false
	}
	r.cancel(cause)
	return true
}

func (r *runner) status() PipelineStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.PipelineID = r.id
	st.Schedule = r.sched.String()
	return st
}

func (r *runner) enabled(level slog.Level) bool {
	return r.env.logger.Enabled(context.Background(), level)
}

func (r *runner) debug(msg string, runNumber int64) {
	if !r.enabled(slog.LevelDebug) {
		return
	}
	r.env.logger.LogAttrs(context.Background(), slog.LevelDebug, msg, slog.String("pipeline_id", r.id), slog.Int64("run_number", runNumber))
}

// logRun logs a line about a run with pipeline_id, run_number and, for a
// fenced lease, fencing_token.
func (r *runner) logRun(level slog.Level, msg string, lease Lease, attrs ...slog.Attr) {
	if !r.enabled(level) {
		return
	}
	all := make([]slog.Attr, 0, 3+len(attrs))
	all = append(all, slog.String("pipeline_id", r.id), slog.Int64("run_number", lease.RunNumber))
	if lease.Fenced() {
		all = append(all, slog.Int64("fencing_token", lease.FencingToken))
	}
	all = append(all, attrs...)
	r.env.logger.LogAttrs(context.Background(), level, msg, all...)
}

// tooManyErrors is the error a pipeline stops with after
// MaxConsecutiveErrors failed runs in a row.
type tooManyErrors struct {
	id       string
	failures int
	last     error
}

func (e *tooManyErrors) Error() string {
	return fmt.Sprintf("runtime: pipeline %q stopped after %d consecutive failed runs: %v", e.id, e.failures, e.last)
}

func (e *tooManyErrors) Unwrap() []error { return []error{ErrTooManyErrors, e.last} }
