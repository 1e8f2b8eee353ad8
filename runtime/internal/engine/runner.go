package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// The runner's timing rules; runtime documents the exported ones.
const (
	// LateSlotGrace is how late a cron slot may start and still run
	// (runtime.LateSlotGrace).
	LateSlotGrace = time.Minute
	// LeaseRetryInterval is how soon a Continuous or Once pipeline asks the
	// coordinator again (runtime.LeaseRetryInterval).
	LeaseRetryInterval = time.Second
	// leaseAcquireTimeout bounds asking a coordinator without a LocalLeaser
	// for a lease. The request is also cancelled by a forced shutdown.
	leaseAcquireTimeout = 10 * time.Second
	// leaseReleaseTimeout bounds releasing or completing a lease after a run;
	// the release uses a context that is not cancelled by shutdown.
	leaseReleaseTimeout = 5 * time.Second
	// maxWait caps every sleep of a scheduler, so a wall-clock jump or a
	// suspend is noticed within a second.
	maxWait = time.Second
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
	outcomeStopped // the lease came after Stop; given back, not run
	outcomePaused  // the pipeline is paused fleet-wide; no lease asked for
	// outcomeSlotDone: the run started and was refused because another run
	// had already completed its slot (an error wrapping ErrSlotCompleted,
	// such as fencing.ErrSlotDone from a database sink): the slot is done,
	// so it is not retried.
	outcomeSlotDone
	// outcomeBackingOff: the coordinator refused the lease because the
	// pipeline backs off after a failed run elsewhere in the fleet
	// (runtime.FailingError); nothing ran.
	outcomeBackingOff
	// outcomeFleetStopped: the coordinator refused the lease because the
	// fleet's consecutive failures reached MaxConsecutiveErrors; the
	// pipeline stops here too.
	outcomeFleetStopped
)

// Runner holds the schedule state of one pipeline and makes its attempts.
// A Pool's dispatcher drives every runner from a timer heap; a pipeline
// started alone (runtime.ScheduledPipeline.Start) runs in a pool of its
// own, and RunNow makes one attempt per runner without a dispatcher.
//
// The plan fields are touched only by the runner's current driver: the
// dispatcher while the runner waits in its heap and an executor while an
// attempt is made. The hand-over goes through the
// dispatcher's queue, lock and completion stack, which order the accesses.
//
// A pool keeps one runner per pipeline for its whole life, so the struct is
// kept small: settings are read from the Spec (runtime's ScheduledPipeline
// as it was when started), times are Unix nanoseconds.
type Runner struct {
	sp    *Spec
	env   *runEnv
	local LocalLeases // the pipeline's, from the first attempt, with a LocalLeaser

	// plan; times in Unix ns, 0 meaning none
	next      int64 // when the next attempt is due; 0: never
	slot      int64 // cron: the slot being attempted or retried
	following int64 // cron: the slot after slot, when already known
	failures  int32 // consecutive failed runs
	retry     bool  // the next attempt retries slot after a failure
	// reran is set while the attempt runs an earlier, interrupted slot in
	// place of the one it asked for (RerunInterrupted): that one is asked
	// for again at once.
	reran bool
	// probe: the coordinator's last completed slot is still to be read
	// (catch-up, catchup.go).
	probe bool
	// checking: this turn out of the heap only looks whether another worker
	// was granted the slot (ahead.go).
	checking bool
	// pre is the decision and lease reply the dispatcher obtained for the
	// next attempt in a batch (see dispatcher.acquireBatch); nil otherwise.
	pre *preAcquired
	// lease-ahead (ahead.go): askAt is when the dispatcher takes the
	// runner out of its heap before next, to ask for next's lease (Unix
	// ns; 0: at next as usual), and lead how long before next the ask was
	// planned.
	askAt int64
	lead  int64
	// side holds the plan state of catch-up and deferred lease requests,
	// which most pipelines never use; nil until they do.
	side *rarePlan

	// dispatcher bookkeeping
	inHeap bool // waiting in the heap; guarded by the dispatcher's lock
	done   bool // finished for good; guarded by the dispatcher's lock
	// stopped sits beside the two flags above, in what would be padding,
	// so the runner keeps within TestRunnerSize.
	stopped  atomic.Bool
	nextDone *Runner // link in the dispatcher's completion stack
	// plannedAt is the clock reading next was planned from (Unix ns), so
	// the dispatcher can tell a plan made before a backward clock jump
	// (to be shifted) from one made after it.
	plannedAt int64

	// index is the pipeline's place among the pool's registered ones,
	// by which a RunObserver and EachReading name it.
	index int32
	mu    sync.Mutex  // guards ctx, st and rare
	ctx   *runContext // the run in flight, if any
	st    runStats
	// rare holds what a run rarely changes: failure and skip counts, the
	// last error, record totals, log throttles, the ShutdownRequested
	// channel. Nil until first needed, so a pool of ten thousand pipelines
	// that succeed does not carry it ten thousand times.
	rare *rareStats
}

// runStats is the part of Status every run updates, kept flat so a
// run updates it without allocating.
type runStats struct {
	state       State
	lastOutcome outcome // of the last run this worker finished (fits beside state)
	consecutive int32
	runs        uint64
	ok          uint64 // runs that succeeded
	lastStart   int64  // of the last finished run
	since       int64  // start of the run in flight, 0 when none is
	lastEnd     int64
	next        int64
	runNumber   int64
	token       int64
	lastToken   int64 // the last fencing token held
	lastSuccess int64 // end of the last successful run
	// the last run this worker finished: its run number and token
	// (lastEnd is its end, lastOutcome how it ended)
	lastRun    int64
	lastRunTok int64
}

// rareStats is the runner's state that only failures, skips, records or
// a ShutdownRequested call make; guarded by the runner's mu.
type rareStats struct {
	failures    uint64
	skipped     uint64
	missed      uint64
	leaseErrors uint64
	lastErr     string
	records     history.RecordCounts // totals over every run
	// metric counts: runs by how they ended, skips by reason, leases lost
	errored, panicked, cancelled uint64
	skippedHeld, skippedDone     uint64
	skippedPaused                uint64
	leaseLost                    uint64
	staleRefused                 uint64
	// deadlinesMissed counts the slots this worker reported as missing
	// their deadline (deadline.go), lastMissedSlot is the last (Unix s).
	deadlinesMissed uint64
	lastMissedSlot  int64
	// After (after.go): slots skipped because an upstream had not
	// completed them, the last reason, and the slot waited for now (Unix
	// ns, 0: none).
	skippedUpstream uint64
	lastSkipReason  string
	awaitingSlot    int64
	// Backfill slots this worker ran (backfill.go): done, skipped (they
	// had completed), failed, and running now.
	backfillDone, backfillSkipped, backfillFailed uint64
	backfillRunning                               int32
	// heldLogged is when heldElsewhere last logged at info level (Unix ns).
	heldLogged int64
	// missedLog holds the skipped slots not yet logged (missed_slots.go).
	missedLog missedLog
	stopCh    chan struct{} // closed by stop
}

// rarePlan is plan state of the dispatcher's that few pipelines use.
type rarePlan struct {
	// catch-up (CatchUpLatest, CatchUpAll): the oldest slot that may not
	// have run fleet-wide and the runs CatchUpAll may still make
	catchUp     int64
	catchUpLeft int32
	// deferredSlot is the plan (next) a deferred lease request was decided
	// for, while the runner waits out the deferral; 0 otherwise.
	deferredSlot int64
	// after is the slot a pipeline with After waits for (after.go).
	after *afterWait
}

// rareLocked returns the runner's rare state, making it; r.mu is held.
func (r *Runner) rareLocked() *rareStats {
	if r.rare == nil {
		r.rare = &rareStats{}
	}
	return r.rare
}

// rareCopy returns a copy of the rare state (zero when none); r.mu is held.
func (r *Runner) rareCopy() rareStats {
	if r.rare == nil {
		return rareStats{}
	}
	return *r.rare
}

// planned returns the rare plan state, making it.
func (r *Runner) planned() *rarePlan {
	if r.side == nil {
		r.side = &rarePlan{}
	}
	return r.side
}

// catchUpFrom is the oldest slot still to catch up on, 0 when none.
func (r *Runner) catchUpFrom() int64 {
	if r.side == nil {
		return 0
	}
	return r.side.catchUp
}

// setCatchUp marks the slots from s as to be caught up (0: none), with
// CatchUpAll's bound not yet started.
func (r *Runner) setCatchUp(s int64) {
	if s == 0 && r.side == nil {
		return
	}
	p := r.planned()
	p.catchUp, p.catchUpLeft = s, 0
}

// deferred is the plan a deferred lease request waits for, 0 when none.
func (r *Runner) deferred() int64 {
	if r.side == nil {
		return 0
	}
	return r.side.deferredSlot
}

// preAcquired is an attempt decided, and its lease asked for, ahead of the
// executor that makes it.
type preAcquired struct {
	runNumber int64
	run       bool // false: decide found nothing to run
	ok        bool // the lease was granted
	err       error
	paused    bool // paused fleet-wide: no lease was asked for
	ahead     bool // asked before the slot's boundary (ahead.go)
}

func newRunner(sp *Spec, env *runEnv) *Runner {
	if sp.Settings == nil {
		sp.Settings = &Settings{} // runtime shares one; a Spec made elsewhere may have none
	}
	return &Runner{sp: sp, env: env}
}

// nsOf and timeOf convert plan times; the zero time is 0.
func nsOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func (r *Runner) id() string { return r.sp.PipelineID }

func (r *Runner) now() time.Time { return r.env.now() }

// nextCron is the first slot strictly after t, 0 when there is none.
func (r *Runner) nextCron(t int64) int64 { return nsOf(r.sp.Schedule.Next(timeOf(t))) }

// stop ends the runner's schedule: the stopped flag is set, the
// ShutdownRequested channel (if a run or Start asked for one) is closed and
// the pool's dispatcher, if any, drops a waiting runner.
func (r *Runner) stop() {
	// The flag changes under mu, as stopChan reads it: otherwise stopChan
	// could make and close the channel between the flag and the close here.
	r.mu.Lock()
	if r.stopped.Swap(true) {
		r.mu.Unlock()
		return
	}
	if r.rare != nil && r.rare.stopCh != nil {
		close(r.rare.stopCh)
	}
	r.mu.Unlock()
	if r.env != nil && r.env.d != nil {
		r.env.d.stopped(r)
	}
}

func (r *Runner) isStopped() bool { return r.stopped.Load() }

// stopChan returns the channel closed by stop. It is made on first use, so
// a pool of pipelines that never ask costs no channel each.
func (r *Runner) stopChan() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.rareLocked()
	if rs.stopCh == nil {
		rs.stopCh = make(chan struct{})
		if r.stopped.Load() {
			close(rs.stopCh)
		}
	}
	return rs.stopCh
}

// begin sets the first attempt: cron at its next slot, every other kind at
// once (an Every pipeline runs at start, then Every after each run).
func (r *Runner) begin(now time.Time) {
	if r.sp.Schedule.Kind() == ScheduleCron {
		r.next = r.nextCron(now.UnixNano())
		if r.env.caps.CompletionReader != nil && r.catchingUp() {
			// The first attempt reads what the fleet last completed.
			r.probe, r.next = true, now.UnixNano()
		}
	} else {
		r.next = now.UnixNano()
	}
	r.setNext(StateIdle)
	if r.next == 0 {
		r.env.logger.Warn("schedule never fires; the pipeline will stay idle",
			slog.String("pipeline_id", r.id()), slog.String("schedule", r.sp.Schedule.String()))
	}
}

// shift moves a wait that measures a duration (an Every interval, a
// backoff, a lease retry) back by a backward wall-clock jump of d, so the
// jump neither lengthens nor repeats it. A cron slot keeps its wall-clock
// time, so after a jump back no slot runs twice; the pipeline just waits for
// the clock to reach its next slot again.
func (r *Runner) shift(d time.Duration) bool {
	if r.next == 0 || (r.sp.Schedule.Kind() == ScheduleCron && !r.retry && !r.awaitingUpstream()) {
		return false
	}
	r.next -= int64(d)
	r.setNext(r.stateOf())
	return true
}

// stateOf is the waiting state: backoff after a failure, idle otherwise.
func (r *Runner) stateOf() State {
	if r.failures > 0 {
		return StateBackoff
	}
	return StateIdle
}

// step makes the attempt due at now, if one is still worth making, and
// plans the next. It returns when the attempt ended (now when none was
// made) and reports done when the pipeline must not run again, with the
// error it stops with.
func (r *Runner) step(now time.Time) (end time.Time, done bool, err error) {
	planned := r.next
	var (
		runNumber int64
		run       bool
	)
	if p := r.pre; p != nil {
		runNumber, run = p.runNumber, p.run
	} else if len(r.sp.After) > 0 {
		runNumber, run, planned = r.decideAfter(now, planned)
	} else {
		runNumber, run = r.decide(now)
	}
	if !run {
		r.pre = nil
		return now, false, nil
	}
	var due int64 // what the run's lateness is measured from
	switch r.sp.Schedule.Kind() {
	case ScheduleCron:
		if !r.retry {
			due = r.slot
		}
	case ScheduleEvery:
		due = planned
	}
	o, end, runErr := r.attempt(runNumber, now, due, false)
	r.pre = nil
	done, err = r.plan(o, runErr, end)
	return end, done, err
}

// decide returns the run number of the attempt due at now. For cron it
// applies LateSlotGrace: it may skip missed slots, or move on to the next
// slot without running.
func (r *Runner) decide(now time.Time) (int64, bool) {
	if d := r.deferred(); d != 0 {
		// Back from a deferred lease request: the slot it was deferred for.
		r.next, r.side.deferredSlot = d, 0
	}
	sched := &r.sp.Schedule
	switch sched.Kind() {
	case ScheduleEvery:
		return everyRunNumber(now, sched.Interval()), true
	case ScheduleContinuous:
		return RunNumberAuto, true
	case ScheduleOnce:
		return RunNumberOnce, true
	}
	nowN := now.UnixNano()
	if r.catchingUp() {
		if s, ok := r.decideCatchUp(nowN); ok {
			return s / int64(time.Second), true
		}
		if r.next > nowN {
			return 0, false // the start probe found nothing to catch up
		}
	}
	if r.retry {
		following := r.nextCron(r.slot)
		if following == 0 || following > nowN {
			return r.slot / int64(time.Second), true
		}
		// A later slot has come meanwhile (the clock jumped forward, the
		// machine slept): the failed slot is dropped like any slot older
		// than the latest, and the latest is judged from here.
		r.retry, r.next, r.following = false, following, 0
	}
	latest, following, missed, exact := r.latestSlot(r.next, nowN)
	if nowN-latest > r.grace() {
		missed++
		r.next = r.nextCron(nowN)
		r.reportMissed(missed, exact, 0, missedBehindGrace)
		r.setNext(r.stateOf())
		return 0, false
	}
	if missed > 0 {
		r.reportMissed(missed, exact, latest, missedOvertaken)
	}
	r.slot, r.following = latest, following
	return latest / int64(time.Second), true
}

// latestSlot walks from the due slot s to the newest slot not after now,
// returns the slot after it when that came out of the walk (0 otherwise)
// and counts the slots passed over. Past maxMissedScan slots it restarts from
// the grace window and reports the count as a lower bound.
func (r *Runner) latestSlot(s, now int64) (latest, following int64, missed uint64, exact bool) {
	latest = s
	for range maxMissedScan {
		n := r.nextCron(latest)
		if n == 0 || n > now {
			return latest, n, missed, true
		}
		latest, missed = n, missed+1
	}
	from := now - r.grace()
	if latest < from {
		c := r.nextCron(from - int64(time.Second))
		for c != 0 && c < from {
			c = r.nextCron(c)
		}
		if c == 0 || c > now {
			return latest, 0, missed, false
		}
		latest = c
	}
	for n := r.nextCron(latest); n != 0 && n <= now; n = r.nextCron(latest) {
		latest = n
	}
	return latest, 0, missed, false
}

// everyRunNumber names the interval window now falls in by its start in
// Unix seconds. Intervals under a second cannot be told apart in seconds, so
// they are numbered by the coordinator, like Continuous.
func everyRunNumber(now time.Time, d time.Duration) int64 {
	if d < time.Second {
		return RunNumberAuto
	}
	return windowStart(now.UnixNano(), int64(d)) / int64(time.Second)
}

// windowStart is the start of the interval window of length iv (ns) that
// n (Unix ns) falls in: n rounded down to a multiple of iv, toward the
// past also before 1970.
func windowStart(n, iv int64) int64 {
	start := n - n%iv
	if n < 0 && n%iv != 0 {
		start -= iv
	}
	return start
}

// plan sets the next attempt after an attempt that ended at end and
// publishes the attempt's outcome and the plan to the status in one step.
func (r *Runner) plan(o outcome, runErr error, end time.Time) (done bool, err error) {
	sp := r.sp
	kind := sp.Schedule.Kind()
	endN := end.UnixNano()
	if r.reran && o == outcomeSuccess {
		// The interrupted slot ran; the one asked for is still to run.
		r.reran, r.failures = false, 0
		r.next = endN
		r.retry = kind == ScheduleCron
		r.publish(o, runErr, endN, StateIdle)
		return false, nil
	}
	r.reran = false
	switch o {
	case outcomeSuccess:
		r.failures, r.retry = 0, false
		switch kind {
		case ScheduleOnce:
			r.publish(o, runErr, endN, StateStopped)
			return true, nil
		case ScheduleCron:
			r.next = r.followingSlot()
		case ScheduleEvery:
			r.next = endN + int64(sp.Schedule.Interval())
		default:
			r.next = endN
		}
		r.publish(o, runErr, endN, StateIdle)
		return false, nil

	case outcomeFailure:
		r.failures++
		delay := BackoffDelay(sp.ErrorBackoff, int(r.failures))
		fleetStopped := false
		if st, ok := r.fleetFailures(); ok {
			// The fleet's count and backoff, as recorded with the lease's
			// give-back, replace this worker's own.
			r.failures, fleetStopped = int32(st.Count), st.Stopped
			delay = max(st.Until.Sub(end), 0)
		}
		if limit := sp.MaxConsecutiveErrors; fleetStopped || (limit > 0 && int(r.failures) >= limit) {
			r.publish(o, runErr, endN, StateStopped)
			r.notifyStopped(runErr, int(r.failures))
			return true, &tooManyErrors{id: r.id(), failures: int(r.failures), last: runErr}
		}
		retryAt := endN + int64(delay)
		r.next = retryAt
		if kind == ScheduleCron {
			// Retry the failed slot unless its successor comes first; then
			// the successor (the first slot after the backoff) runs instead.
			following := r.followingSlot()
			r.retry = following == 0 || following > retryAt
			if !r.retry && r.catchUpFrom() == 0 {
				r.next = r.nextCron(retryAt - 1)
			}
			// While catching up, the next missed slot comes after the backoff.
		}
		r.publish(o, runErr, endN, StateBackoff)
		r.logBackoff(delay)
		return false, nil

	case outcomeBackingOff, outcomeFleetStopped:
		return r.planFleetFailing(o, runErr, endN)

	case outcomeSlotCompleted, outcomeSlotDone:
		if kind == ScheduleOnce {
			r.publish(o, runErr, endN, StateStopped)
			return true, nil
		}
	}
	// Not run here: another worker has it, it already ran, or the
	// coordinator could not be asked. Try again at the next slot.
	r.retry = false
	switch kind {
	case ScheduleCron:
		r.next = r.followingSlot()
		if o == outcomeLeaseError && r.catchingUp() {
			// The slot may have run nowhere: it is caught up once the
			// coordinator answers, at the next slot's time, not in a loop.
			if r.catchUpFrom() == 0 || r.slot < r.catchUpFrom() {
				r.setCatchUp(r.slot)
			}
			r.next = r.nextCron(endN)
		}
		if o == outcomeNotAcquired && r.catchUpFrom() != 0 {
			// Another replica holds the lease: it is catching up the same
			// slots in the same order, so this one steps aside rather than
			// run a later slot first (which would mark the earlier ones
			// done unrun).
			r.setCatchUp(0)
			r.next = r.nextCron(endN)
		}
	case ScheduleEvery:
		r.next = endN + int64(sp.Schedule.Interval())
	default:
		r.next = endN + int64(LeaseRetryInterval)
	}
	r.publish(o, runErr, endN, r.stateOf())
	return false, nil
}

// followingSlot returns the cron slot after the one just attempted,
// computing it unless decide already did.
func (r *Runner) followingSlot() int64 {
	f := r.following
	if f == 0 {
		f = r.nextCron(r.slot)
	}
	r.following = 0
	return f
}

// publish records an attempt's outcome and the new plan in the status.
func (r *Runner) publish(o outcome, runErr error, end int64, state State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o {
	case outcomeSuccess, outcomeFailure, outcomeSlotDone:
		r.ctx = nil
		r.st.runs++
		r.st.lastStart, r.st.since = r.st.since, 0
		r.st.lastEnd = end
		r.st.lastRun, r.st.lastRunTok, r.st.lastOutcome = r.st.runNumber, r.st.token, o
		r.st.runNumber, r.st.token = 0, 0
		if r.rare != nil {
			r.rare.lastErr = ""
		}
		switch {
		case o == outcomeSlotDone:
			// Not a failure: the slot ran elsewhere, as a skipped
			// completed slot does.
			rs := r.rareLocked()
			rs.skipped++
			rs.skippedDone++
			rs.lastErr = runErr.Error()
		case runErr != nil:
			rs := r.rareLocked()
			rs.failures++
			rs.lastErr = runErr.Error()
		default:
			r.st.lastSuccess = end
		}
	case outcomeLeaseError:
		r.rareLocked().leaseErrors++
	case outcomeBackingOff, outcomeFleetStopped:
		// Another replica's failed run: its error is this pipeline's
		// last error too.
		if failing, ok := r.env.failing(runErr); ok {
			r.rareLocked().lastErr = failing.LastError
		}
	case outcomeStopped:
	case outcomeSlotCompleted:
		rs := r.rareLocked()
		rs.skipped++
		rs.skippedDone++
	case outcomePaused:
		r.rareLocked().skippedPaused++
	default:
		rs := r.rareLocked()
		rs.skipped++
		rs.skippedHeld++
	}
	r.st.consecutive = r.failures
	r.st.state = state
	r.st.next = 0
	if state != StateStopped {
		r.st.next = r.next
	}
}

func (r *Runner) logBackoff(delay time.Duration) {
	if !r.enabled(slog.LevelInfo) {
		return
	}
	r.env.logger.LogAttrs(context.Background(), slog.LevelInfo, "backing off after a failed run",
		slog.String("pipeline_id", r.id()), slog.Int("consecutive_errors", int(r.failures)),
		slog.Duration("backoff", delay), slog.Time("next_attempt", timeOf(r.next)))
}

func (r *Runner) setNext(state State) {
	r.mu.Lock()
	r.st.state = state
	r.st.next = r.next
	r.mu.Unlock()
}

func (r *Runner) setStopped() {
	r.mu.Lock()
	r.st.state = StateStopped
	r.st.next = 0
	r.mu.Unlock()
}

// cancelRun cancels the run in flight, if any, with cause. With a non-zero
// token only a run holding that fencing token is cancelled, so a late report
// about an earlier run cannot cancel a newer one.
func (r *Runner) cancelRun(cause error, token int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil || (token != 0 && r.st.token != 0 && token != r.st.token) {
		return false
	}
	r.ctx.cancel(cause)
	return true
}

// running reports whether a run is in flight.
func (r *Runner) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ctx != nil
}

// status returns r's entry in /status, its times its own.
func (r *Runner) status() Status {
	var rd Reading
	r.read(&rd)
	st := rd.Status
	st.Schedule = r.sp.Schedule.String()
	for _, t := range []**time.Time{&st.RunningSince, &st.LastRunStart, &st.LastRunEnd, &st.NextRun,
		&st.BackoffUntil, &st.LastMissedSlot, &st.LastSuccess, &st.AwaitingUpstream} {
		if *t != nil {
			v := **t
			*t = &v
		}
	}
	if st.LastRun != nil {
		v := *st.LastRun
		st.LastRun = &v
	}
	return st
}

func (r *Runner) enabled(level slog.Level) bool {
	return r.env.logger.Enabled(context.Background(), level)
}

// logRun logs a line about a run with pipeline_id, run_number (none for
// RunNumberAuto: not numbered yet) and, for a
// fenced lease, fencing_token. An attempt not granted passes a Lease holding
// only the run number it asked for.
func (r *Runner) logRun(level slog.Level, msg string, lease Lease, attrs ...slog.Attr) {
	if !r.enabled(level) {
		return
	}
	all := make([]slog.Attr, 0, 3+len(attrs))
	all = append(all, slog.String("pipeline_id", r.id()))
	if lease.RunNumber != RunNumberAuto {
		// RunNumberAuto is no run's number: the coordinator has not
		// numbered the run yet (a triggered or Continuous run asking for
		// its lease), so the line names none rather than 0.
		all = append(all, slog.Int64("run_number", lease.RunNumber))
	}
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
