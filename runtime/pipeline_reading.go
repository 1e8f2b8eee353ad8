package runtime

import "time"

// PipelineReading is what EachPipeline reads of one pipeline: its status
// as /status serves it, and the little a metrics exporter needs besides.
// It is reused from one pipeline to the next, so reading ten thousand
// pipelines at each scrape allocates nothing per pipeline.
type PipelineReading struct {
	// Index is the pipeline's place among the pool's registered
	// pipelines (Pipelines), the index a RunObserver is told of its runs
	// by.
	Index int
	// Pipeline is the registered pipeline; read it, do not change it.
	Pipeline *ScheduledPipeline
	// Status is the pipeline's entry in /status but for Schedule, left
	// empty (its text costs an allocation; Pipeline.Schedule is there).
	// Its time pointers point into the reading, valid until fn returns:
	// copy what is kept.
	Status PipelineStatus
	// Planned is when the next attempt is due, zero when none is (a run
	// in flight, a stopped pipeline). Unlike Status.NextRun it is kept
	// while the pipeline is paused: a backoff goes on meanwhile.
	Planned time.Time
	// Interval is the time between two runs the schedule plans: an every
	// schedule's interval, the gap between a cron schedule's slot after
	// Planned (or now) and the one after it; 0 for continuous and once.
	Interval time.Duration

	times   [8]time.Time
	lastRun LastRunStatus
}

// EachPipeline calls fn with the reading of every pipeline of the pool's
// Run, in registration order, under no lock of the pool's: the way a
// metrics exporter reads the counters at scrape time without a copy of
// /status. Before Run, and for a pool only run with RunNow, fn is not
// called. fn must not keep the reading, which is reused.
func (p *WorkerPool) EachPipeline(fn func(*PipelineReading)) {
	pr := p.run.Load()
	if pr == nil {
		return
	}
	now := pr.env.now()
	var rd PipelineReading
	for _, r := range pr.runners {
		next := r.read(&rd)
		rd.Interval = scheduleInterval(r.sp.Schedule, next, now)
		fn(&rd)
	}
}

// read fills rd with r's status, its times pointing into rd, and returns
// the planned next attempt (Unix ns, 0 when none).
func (r *runner) read(rd *PipelineReading) int64 {
	r.mu.Lock()
	st, rs := r.st, r.rareCopy()
	r.mu.Unlock()
	paused := r.env.paused(r)
	planned := st.next
	if paused {
		// A paused pipeline makes no scheduled attempt, so none is next.
		st.next = 0
	}
	rd.Index, rd.Pipeline, rd.Planned = int(r.index), r.sp, timeOf(planned)
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
	var lastRun *LastRunStatus
	if st.lastEnd != 0 {
		rd.lastRun = lastRunOf(st)
		lastRun = &rd.lastRun
	}
	rd.Status = PipelineStatus{
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
		Outcomes: RunOutcomes{Succeeded: st.ok, Errored: rs.errored, Panicked: rs.panicked, Cancelled: rs.cancelled,
			SkippedHeld: rs.skippedHeld, SkippedCompleted: rs.skippedDone},
		LeaseLost:          rs.leaseLost,
		StaleWritesRefused: rs.staleRefused,
		LastFencingToken:   st.lastToken,
		LastSuccess:        at(6, st.lastSuccess),
		SkippedUpstream:    rs.skippedUpstream,
		LastSkipReason:     rs.lastSkipReason,
		AwaitingUpstream:   at(7, rs.awaitingSlot), // After: the slot waiting for its upstreams
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
