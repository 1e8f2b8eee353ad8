package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agora-etl/agora/runtime/notify"
)

// Deadlines (ScheduledPipeline.Deadline) are watched by one goroutine per
// pool, started only when a pipeline has one, with a heap holding one
// entry per such pipeline: the next slot to check and when. Slots are
// checked in order, each at its fire time plus the deadline, so a pipeline
// never has more than one check pending, and a pipeline without a
// deadline costs nothing: no entry, no field, no timer. The counts a miss
// makes live in the runner's rare state, made at the first miss.
//
// The check is separate from the runs on purpose: a slot that never ran
// (every replica down, the run still going, the fleet backing off) is
// exactly what a deadline is for, and has no run to hang the check on.

// deadlineRetry is how soon a check the coordinator could not answer is
// made again. The slot is kept: a check that comes late still reports.
const deadlineRetry = 5 * time.Second

// deadlineCheckTimeout bounds one question to the coordinator.
const deadlineCheckTimeout = 10 * time.Second

// deadlineWatch checks the deadlines of one pool's pipelines.
type deadlineWatch struct {
	env     *runEnv
	runners []*Runner // those with a deadline; their first checks are planned by the loop
	started time.Time
	// heap orders the pipelines by when their pending check is due (the
	// dispatcher's heap); slot is each one's slot to check (Unix ns, its
	// fire time). Touched by the loop only.
	heap dueHeap
	slot map[*Runner]int64

	ctx     context.Context // cancelled by stop: a question in flight ends
	cancel  context.CancelFunc
	syncReq chan chan struct{}
	done    chan struct{}
}

// newDeadlineWatch returns the watch of runners' deadlines, nil when none
// has one. Call it after the runners began, with the pool's start time.
func newDeadlineWatch(env *runEnv, runners []*Runner, now time.Time) *deadlineWatch {
	var w *deadlineWatch
	for _, r := range runners {
		if r.sp.Deadline <= 0 {
			continue
		}
		if w == nil {
			w = &deadlineWatch{env: env, started: now, syncReq: make(chan chan struct{}), done: make(chan struct{})}
			w.ctx, w.cancel = context.WithCancel(env.hard)
		}
		w.runners = append(w.runners, r)
	}
	return w
}

// plan makes each pipeline's first check. The first slot checked is the
// first whose deadline is still ahead; the one before it is checked at
// once when the fleet may have missed it while no worker was checking
// (lookBack).
func (w *deadlineWatch) plan() {
	now := w.started.UnixNano()
	for _, r := range w.runners {
		if s := w.lookBack(r, now); s != 0 {
			w.push(r, s, now)
			continue
		}
		if s := firstDeadlineSlot(r.sp, now); s != 0 {
			w.push(r, s, s+r.sp.deadlineWait())
		}
	}
	w.runners = nil
}

// lookBack returns the latest slot (Unix ns) of r whose deadline passed by
// now, when a worker starting now should still check it: only with a
// fleet-wide DeadlineReporter (which knows whether another replica
// reported it) and a CompletionReader that knows the pipeline completed
// a slot before it. So after every replica was down at a deadline the
// first to come back reports the slot, while a new pipeline, or one whose
// last slot succeeded, has nothing to report. The walk is bounded by
// maxMissedScan slots after the last completed one; 0: nothing to check.
func (w *deadlineWatch) lookBack(r *Runner, now int64) int64 {
	caps := &w.env.caps
	if caps.DeadlineReporter == nil || caps.CompletionReader == nil || caps.LocalLeaser != nil {
		return 0 // an in-process coordinator knows nothing from before the start
	}
	ctx, cancel := context.WithTimeout(w.ctx, deadlineCheckTimeout)
	last, ok, err := caps.CompletionReader.LastCompleted(ctx, r.id())
	cancel()
	if err != nil || !ok {
		return 0
	}
	due := now - r.sp.deadlineWait() // a slot at or before due is past its deadline
	var found int64
	s := slotAfter(r.sp, last*int64(time.Second))
	for range maxMissedScan {
		if s == 0 || s > due {
			return found
		}
		found = s
		s = slotAfter(r.sp, s)
	}
	return 0
}

// firstDeadlineSlot is sp's first slot (Unix ns) whose check comes after
// now, 0 when there is none.
func firstDeadlineSlot(sp *Spec, now int64) int64 {
	s := slotAfter(sp, now-sp.deadlineWait())
	if sp.Schedule.Kind() == ScheduleEvery {
		// Not a window that began before this worker did: its check comes
		// after the start (an interval more), but nothing here could have
		// run in it. After every replica was down, lookBack judges it.
		s = max(s, slotAfter(sp, now-int64(sp.Schedule.Interval())))
	}
	return s
}

// slotAfter is sp's first slot strictly after t (Unix ns), 0 when none:
// a cron schedule's next fire time, an every schedule's next interval
// window (the window a run starting then is numbered by).
func slotAfter(sp *Spec, t int64) int64 {
	if sp.Schedule.Kind() == ScheduleEvery {
		iv := int64(sp.Schedule.Interval())
		return windowStart(t, iv) + iv
	}
	return nsOf(sp.Schedule.Next(timeOf(t)))
}

// start runs the watch's loop.
func (w *deadlineWatch) start() { go w.loop() }

// stop ends the loop and waits for it.
func (w *deadlineWatch) stop() {
	w.cancel()
	<-w.done
}

// sync returns once the loop has made every check due by now; tests use
// it, as they use the dispatcher's, to know the pool is quiet.
func (w *deadlineWatch) sync() bool {
	ack := make(chan struct{})
	select {
	case w.syncReq <- ack:
	case <-w.done:
		return false
	}
	select {
	case <-ack:
		return true
	case <-w.done:
		return false
	}
}

func (w *deadlineWatch) loop() {
	defer close(w.done)
	w.plan()
	var timer Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	var ack chan struct{}
	for {
		// Every wake makes the checks due first, so a sync is answered
		// only once they are made.
		for len(w.heap) > 0 && w.heap[0].due <= w.env.now().UnixNano() {
			r := w.heap.pop()
			w.check(r, w.slot[r])
			if w.ctx.Err() != nil {
				return
			}
		}
		if ack != nil {
			close(ack)
			ack = nil
		}
		// At most maxWait, as the dispatcher: a wall-clock jump forward is
		// noticed within a second.
		wait := maxWait
		if len(w.heap) > 0 {
			wait = min(wait, time.Duration(w.heap[0].due-w.env.now().UnixNano()))
		}
		if timer == nil {
			timer = w.env.clock.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C():
		case ack = <-w.syncReq:
		case <-w.ctx.Done():
			return
		}
	}
}

// check judges r's slot and plans its next check.
func (w *deadlineWatch) check(r *Runner, slot int64) {
	if r.isStopped() {
		// Stopped (Stop, shutdown): its schedule is over. A pipeline that
		// stopped after too many failed runs is not stopped this way, and
		// its missed slots are still reported.
		return
	}
	d := r.sp.Deadline
	if !r.env.paused(r) { // an operator paused it: no alert meanwhile
		missed, err := w.missed(r, slot)
		if err != nil {
			if w.ctx.Err() != nil {
				return
			}
			r.env.logger.Warn("could not check a slot's deadline; checking again",
				slog.String("pipeline_id", r.id()), slog.Int64("run_number", slot/int64(time.Second)),
				slog.Duration("retry_in", deadlineRetry), slog.Any("error", err))
			w.push(r, slot, r.now().UnixNano()+int64(deadlineRetry))
			return
		}
		if missed {
			r.deadlineMissed(slot, d)
		}
	}
	if next := slotAfter(r.sp, slot); next != 0 {
		w.push(r, next, next+r.sp.deadlineWait())
	}
}

// missed asks whether slot (Unix ns) of r missed its deadline and falls to
// this worker to report.
func (w *deadlineWatch) missed(r *Runner, slot int64) (bool, error) {
	sec := slot / int64(time.Second)
	caps := &r.env.caps
	ctx, cancel := context.WithTimeout(w.ctx, deadlineCheckTimeout)
	defer cancel()
	if rep := caps.DeadlineReporter; rep != nil {
		report, err := rep.MissedDeadline(ctx, r.id(), sec)
		if err != nil {
			return false, fmt.Errorf("runtime: deadline of pipeline %q: %w", r.id(), err)
		}
		return report, nil
	}
	// Without the capability each worker judges by what it knows: a
	// success of its own that ended after the slot fired, or the fleet's
	// last completed slot.
	r.mu.Lock()
	ownSuccess := r.st.lastSuccess >= slot
	r.mu.Unlock()
	if ownSuccess {
		return false, nil
	}
	if cr := caps.CompletionReader; cr != nil {
		last, ok, err := cr.LastCompleted(ctx, r.id())
		if err != nil {
			return false, fmt.Errorf("runtime: deadline of pipeline %q: %w", r.id(), err)
		}
		if ok && last >= sec {
			return false, nil
		}
	}
	return true, nil
}

// deadlineMissed reports that slot (Unix ns) did not succeed within d of
// its fire time: counted, logged and sent to the notifier.
func (r *Runner) deadlineMissed(slot int64, d time.Duration) {
	sec := slot / int64(time.Second)
	r.mu.Lock()
	rs := r.rareLocked()
	rs.deadlinesMissed++
	rs.lastMissedSlot = sec
	r.mu.Unlock()
	at := time.Unix(sec, 0).UTC()
	r.env.logger.LogAttrs(context.Background(), slog.LevelWarn, "slot missed its deadline",
		slog.String("pipeline_id", r.id()), slog.Int64("run_number", sec),
		slog.Time("slot", at), slog.Duration("deadline", d))
	if n := r.env.notifier; n != nil {
		n.Notify(notify.Event{Kind: notify.DeadlineMissed, PipelineID: r.id(), WorkerID: r.env.workerID,
			RunNumber: sec, Deadline: d.String(), Time: r.now(),
			Error: r.deadlineText(at, d)})
	}
}

// deadlineText says what missed its deadline: a cron slot, or an every
// window, which is given an interval more (deadlineWait).
func (r *Runner) deadlineText(at time.Time, d time.Duration) string {
	if r.sp.Schedule.Kind() == ScheduleEvery {
		iv := r.sp.Schedule.Interval()
		return fmt.Sprintf("no run of the %s window from %s has succeeded within %s of its start (the interval and the %s deadline)",
			iv, at.Format(time.RFC3339), iv+d, d)
	}
	return fmt.Sprintf("slot %s has not succeeded within %s of its fire time", at.Format(time.RFC3339), d)
}

// push plans r's check of slot at at (Unix ns): one pending check per
// pipeline, so the slot is kept beside the heap, by runner.
func (w *deadlineWatch) push(r *Runner, slot, at int64) {
	if w.slot == nil {
		w.slot = make(map[*Runner]int64)
	}
	w.slot[r] = slot
	w.heap.push(at, r)
}

// deadlineWait is how long after a slot's start its check is made: the
// Deadline for a cron slot, which fires at a fixed time; an interval more
// for an every window. An every run is planned an interval after the last
// one ended, so its start drifts by each run's duration and, now and then,
// passes over a window into the next: that run, early in the next window,
// is the skipped window's run late, not a failure. Checking an interval
// later lets it count (a later slot's success meets an earlier slot's
// deadline), so a healthy pipeline is not reported when it drifts.
func (sp *Spec) deadlineWait() int64 {
	if sp.Schedule.Kind() == ScheduleEvery {
		return int64(sp.Schedule.Interval() + sp.Deadline)
	}
	return int64(sp.Deadline)
}
