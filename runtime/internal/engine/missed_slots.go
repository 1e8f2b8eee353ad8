package engine

import (
	"context"
	"log/slog"
	"time"
)

// missedSlotLogInterval is the least time between two warnings about one
// pipeline's skipped cron slots. The first skip is logged at once; the
// slots skipped after it within the interval are counted and reported
// together by the next warning, with when the count began. Every skip is
// counted in /status (missed_slots) and the agora_skipped_runs_total
// metric as it happens.
const missedSlotLogInterval = time.Minute

// missedCause says why cron slots were skipped.
type missedCause int

const (
	// missedOvertaken: a newer slot was already due when the pipeline could
	// run again, so the newest ran and the ones before it were skipped.
	missedOvertaken missedCause = iota
	// missedBehindGrace: even the newest due slot was more than the
	// late-slot grace behind, so none ran.
	missedBehindGrace
)

// missedLog is a runner's skipped-slot counts since its last warning;
// guarded by the runner's mu.
type missedLog struct {
	loggedAt int64     // when the last warning was logged (Unix ns), 0 never
	since    int64     // when the first skip not yet logged happened, 0 none
	counts   [2]uint64 // skips not yet logged, by cause
	inexact  bool      // some count not yet logged is a lower bound
}

// reportMissed counts n skipped cron slots (a lower bound unless exact)
// and logs them, aggregated to a warning per missedSlotLogInterval that
// says what happened. running is the slot run instead (Unix ns), 0 when
// none was.
func (r *Runner) reportMissed(n uint64, exact bool, running int64, cause missedCause) {
	if n == 0 {
		return
	}
	nowN := r.now().UnixNano()
	r.mu.Lock()
	rs := r.rareLocked()
	rs.missed += n
	m := &rs.missedLog
	if m.since == 0 {
		m.since = nowN
	}
	m.counts[cause] += n
	m.inexact = m.inexact || !exact
	due := m.loggedAt == 0 || nowN-m.loggedAt >= int64(missedSlotLogInterval) || nowN < m.loggedAt
	var counts [2]uint64
	var since int64
	inexact := false
	if due {
		counts, since, inexact = m.counts, m.since, m.inexact
		*m = missedLog{loggedAt: nowN}
	}
	r.mu.Unlock()
	if !due {
		return
	}
	total := counts[missedOvertaken] + counts[missedBehindGrace]
	attrs := []slog.Attr{
		slog.String("pipeline_id", r.id()),
		slog.Uint64("missed_slots", total),
		slog.Bool("exact_count", !inexact),
	}
	if since != nowN {
		attrs = append(attrs, slog.Time("since", timeOf(since)))
	}
	if running != 0 {
		attrs = append(attrs, slog.Int64("run_number", running/int64(time.Second)))
	}
	var msg string
	switch {
	case counts[missedBehindGrace] == 0:
		msg = "cron slots skipped: a newer slot was already due when the pipeline could run, so only the newest ran (a previous run, a pause or a slow lease request took longer than the schedule's interval)"
	case counts[missedOvertaken] == 0:
		msg = "cron slots skipped: they were more than the late-slot grace behind when the pipeline could run (the process was paused or suspended, the clock jumped forward, or a previous run overran them)"
	default:
		msg = "cron slots skipped: some because a newer slot was already due, some because they were more than the late-slot grace behind"
		attrs = append(attrs,
			slog.Uint64("overtaken", counts[missedOvertaken]),
			slog.Uint64("behind_grace", counts[missedBehindGrace]))
	}
	r.env.logger.LogAttrs(context.Background(), slog.LevelWarn, msg, attrs...)
}
