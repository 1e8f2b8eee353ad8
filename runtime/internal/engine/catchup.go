package engine

import (
	"context"
	"log/slog"
	"time"
)

// grace is the pipeline's late-slot grace.
func (r *Runner) grace() int64 {
	if r.sp.Grace > 0 {
		return int64(r.sp.Grace)
	}
	return int64(LateSlotGrace)
}

// catchingUp reports whether r's policy catches up missed slots.
func (r *Runner) catchingUp() bool {
	return r.sp.CatchUp != CatchUpSkip && r.sp.Schedule.Kind() == ScheduleCron
}

// probeCompleted asks the coordinator for the last completed slot, once a
// start (or after it failed, at each attempt until it answers), and marks
// the slots after it and up to now as to be caught up.
func (r *Runner) probeCompleted(nowN int64) {
	cr := r.env.caps.CompletionReader
	if cr == nil {
		r.probe = false
		return
	}
	r.env.enterBusy()
	ctx, cancel := context.WithTimeout(r.env.hard, leaseAcquireTimeout)
	last, known, err := cr.LastCompleted(ctx, r.id())
	cancel()
	r.env.leaveBusy()
	if err != nil {
		r.env.logger.Warn("cannot read the last completed slot; catching up when the coordinator answers",
			slog.String("pipeline_id", r.id()), slog.Any("error", err))
		return
	}
	r.probe = false
	if !known {
		return // a pipeline that never completed has nothing to catch up
	}
	first := r.nextCron(last * int64(time.Second))
	if first != 0 && first <= nowN && (r.catchUpFrom() == 0 || first < r.catchUpFrom()) {
		r.setCatchUp(first)
	}
}

// catchUpSlot returns the slot to run next while catching up and the slot
// to plan after it when already known (0: the one after it), and moves the
// catch-up on. Called by decide with r.catchUpFrom() set.
func (r *Runner) catchUpSlot(nowN int64) (slot, following int64) {
	if r.sp.CatchUp == CatchUpLatest {
		latest, _, missed, exact := r.latestSlot(r.catchUpFrom(), nowN)
		if missed > 0 {
			r.reportMissed(missed, exact, latest, missedOvertaken)
		}
		r.setCatchUp(0)
		return latest, 0
	}
	s := r.catchUpFrom()
	if r.side.catchUpLeft == 0 {
		r.side.catchUpLeft = MaxCatchUpRuns
		r.env.logger.Info("catching up missed cron slots, oldest first",
			slog.String("pipeline_id", r.id()), slog.Time("from", timeOf(s)), slog.Int("at_most", MaxCatchUpRuns))
	}
	r.side.catchUpLeft--
	next := r.nextCron(s)
	switch {
	case next == 0 || next > nowN:
		r.setCatchUp(0) // caught up
	case r.side.catchUpLeft == 0:
		// The rest is skipped as under CatchUpSkip: only the newest slot
		// runs after this one, if it is within the grace.
		r.side.catchUp = 0
		latest, _, missed, exact := r.latestSlot(next, nowN)
		following = latest
		cause := missedOvertaken
		if nowN-latest > r.grace() {
			missed++
			following = r.nextCron(nowN)
			cause = missedBehindGrace
		}
		r.env.logger.Warn("catch-up bound reached: later missed slots are skipped",
			slog.String("pipeline_id", r.id()), slog.Int("ran", MaxCatchUpRuns), slog.Time("skipping_from", timeOf(next)))
		r.reportMissed(missed, exact, 0, cause)
	default:
		r.side.catchUp = next
	}
	return s, following
}

// decideCatchUp is decide's catch-up step: it reads the coordinator's last
// completed slot when still to be done, notices slots missed locally (more
// than one due, or the due one past the grace), and returns the slot to run
// when catching up.
func (r *Runner) decideCatchUp(nowN int64) (int64, bool) {
	if r.probe {
		r.probeCompleted(nowN)
		if r.catchUpFrom() == 0 && r.next <= nowN && !r.retry {
			// Started with nothing to catch up: wait for the next slot.
			// (When the coordinator did not answer, it is asked again then.)
			r.next = r.nextCron(nowN)
			r.setNext(r.stateOf())
			return 0, false
		}
	}
	if r.retry {
		return 0, false
	}
	if r.catchUpFrom() == 0 && r.next != 0 && r.next <= nowN {
		if n := r.nextCron(r.next); (n != 0 && n <= nowN) || nowN-r.next > r.grace() {
			r.setCatchUp(r.next)
		}
	}
	if r.catchUpFrom() == 0 {
		return 0, false
	}
	s, following := r.catchUpSlot(nowN)
	r.slot, r.following = s, following
	return s, true
}

// MaxCatchUpRuns bounds the slots CatchUpAll runs after one outage
// (runtime.MaxCatchUpRuns).
const MaxCatchUpRuns = 100
