package engine

import "time"

// read fills rd with r's status, its times pointing into rd, and returns
// the planned next attempt (Unix ns, 0 when none).
func (r *Runner) read(rd *Reading) int64 {
	r.mu.Lock()
	st, rs := r.st, r.rareCopy()
	r.mu.Unlock()
	paused := r.env.paused(r)
	planned := st.next
	if paused {
		// A paused pipeline makes no scheduled attempt, so none is next.
		st.next = 0
	}
	rd.Index, rd.Planned = int(r.index), timeOf(planned)
	rd.times = [8]time.Time{}
	at := func(i int, ns int64) *time.Time {
		if ns == 0 {
			return nil
		}
		rd.times[i] = time.Unix(0, ns)
		return &rd.times[i]
	}
	var backoffUntil *time.Time
	if st.state == StateBackoff {
		backoffUntil = at(4, st.next)
	}
	var lastMissed *time.Time
	if rs.lastMissedSlot != 0 {
		rd.times[5] = time.Unix(rs.lastMissedSlot, 0).UTC()
		lastMissed = &rd.times[5]
	}
	var lastRun *LastRun
	if st.lastEnd != 0 {
		rd.lastRun = lastRunOf(st)
		lastRun = &rd.lastRun
	}
	rd.Status = Status{
		PipelineID:        r.id(),
		State:             st.state,
		Runs:              st.runs,
		Failures:          rs.failures,
		Skipped:           rs.skipped,
		MissedSlots:       rs.missed,
		LeaseErrors:       rs.leaseErrors,
		ConsecutiveErrors: int(st.consecutive),
		RunningSince:      at(0, st.since),
		LastRunStart:      at(1, st.lastStart),
		LastRunEnd:        at(2, st.lastEnd),
		LastError:         rs.lastErr,
		NextRun:           at(3, st.next),
		RunNumber:         st.runNumber,
		LeaseToken:        st.token,
		Paused:            paused,
		SkippedPaused:     rs.skippedPaused,
		Records:           rs.records,
		BackoffUntil:      backoffUntil,
		LastRun:           lastRun,
		DeadlinesMissed:   rs.deadlinesMissed,
		LastMissedSlot:    lastMissed,
		Outcomes: Outcomes{Succeeded: st.ok, Errored: rs.errored, Panicked: rs.panicked, Cancelled: rs.cancelled,
			SkippedHeld: rs.skippedHeld, SkippedCompleted: rs.skippedDone},
		LeaseLost:          rs.leaseLost,
		StaleWritesRefused: rs.staleRefused,
		LastFencingToken:   st.lastToken,
		LastSuccess:        at(6, st.lastSuccess),
		SkippedUpstream:    rs.skippedUpstream,
		LastSkipReason:     rs.lastSkipReason,
		AwaitingUpstream:   at(7, rs.awaitingSlot), // After: the slot waiting for its upstreams
		BackfillDone:       rs.backfillDone,
		BackfillSkipped:    rs.backfillSkipped,
		BackfillFailed:     rs.backfillFailed,
		BackfillRunning:    int(rs.backfillRunning),
	}
	return planned
}

// scheduleInterval is the time between two planned runs of s: an every
// schedule's interval; for cron the gap between the slot after next (a
// plan in Unix ns; now when there is none) and the one after it, so a
// schedule with uneven gaps ("0 9 * * 1-5") reports the gap ahead. 0 for
// continuous, once and cron schedules that never fire again.
func scheduleInterval(s Schedule, next int64, now time.Time) time.Duration {
	switch s.Kind() {
	case ScheduleEvery:
		return s.Interval()
	case ScheduleCron:
		from := timeOf(next)
		if from.IsZero() {
			from = now
		}
		a := s.Next(from)
		if a.IsZero() {
			return 0
		}
		if b := s.Next(a); !b.IsZero() {
			return b.Sub(a)
		}
	}
	return 0
}
