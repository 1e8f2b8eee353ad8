package fleet

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/agora-etl/agora/internal/humanize"
	"github.com/agora-etl/agora/runtime"
)

// DefaultRunsLimit is how many runs "fleet runs" prints without --limit.
const DefaultRunsLimit = 20

// runsFilter is what "fleet runs" was asked for.
type runsFilter struct {
	limit  int
	failed bool
	since  time.Duration
}

// keep reports whether run passes the filter at now.
func (f runsFilter) keep(run runtime.RunRecord, now time.Time) bool {
	if f.failed && run.Outcome == runtime.OutcomeSucceeded {
		return false
	}
	return f.since <= 0 || !run.End.Before(now.Add(-f.since))
}

// Runs reads the run history of the named pipelines (every known one when
// ids is empty), merged newest first, at most limit runs (<= 0: all kept)
// passing keep.
func Runs(ctx context.Context, b Backend, ids []string, limit int, keep func(runtime.RunRecord) bool) ([]runtime.RunRecord, error) {
	histories, err := b.Runs(ctx, ids, 0)
	if err != nil {
		return nil, err
	}
	var all []runtime.RunRecord
	for _, h := range histories {
		for _, run := range h {
			if keep == nil || keep(run) {
				all = append(all, run)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].End.After(all[j].End) })
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	if all == nil {
		all = []runtime.RunRecord{}
	}
	return all, nil
}

func (c *command) runs(ctx context.Context, only []string, f runsFilter) error {
	ws, err := c.b.Workers(ctx)
	if err != nil {
		return err
	}
	ids, _ := known(ws)
	if len(only) > 0 {
		// A pipeline no live worker runs now may still have a history.
		ids = only
	}
	runs, err := Runs(ctx, c.b, ids, f.limit, func(r runtime.RunRecord) bool { return f.keep(r, c.now) })
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(runs)
	}
	t := newTable(c.out, "PIPELINE", "RUN", "TOKEN", "WORKER", "START", "END", "DURATION", "OUTCOME", "IN", "OUT", "DLQ", "TRIGGER", "ERROR")
	for _, r := range runs {
		trigger := "scheduled"
		if r.Triggered {
			trigger = "triggered"
		}
		t.row(r.PipelineID, fmt.Sprint(r.RunNumber), fmt.Sprint(r.FencingToken), r.WorkerID,
			r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), humanize.RunDuration(r.Duration),
			string(r.Outcome), fmt.Sprint(r.Records.In), fmt.Sprint(r.Records.Out), fmt.Sprint(r.Records.DeadLettered),
			trigger, oneLine(r.Error))
	}
	return t.flush()
}

// oneLine keeps a table row on one line: an error's first line, cut short.
func oneLine(s string) string {
	if s == "" {
		return "-"
	}
	for i, ch := range s {
		if ch == '\n' || ch == '\r' {
			s = s[:i] + " …"
			break
		}
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}
