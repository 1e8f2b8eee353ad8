package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/agora-etl/agora/internal/humanize"
	"github.com/agora-etl/agora/internal/texttable"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// DefaultRunsLimit is how many runs "fleet runs" prints without --limit.
const DefaultRunsLimit = 20

func (c *command) runs(ctx context.Context, q distributed.RunQuery) error {
	runs, err := c.in.Runs(ctx, q)
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(runs)
	}
	t := newTable(c.out, "PIPELINE", "RUN", "TOKEN", "WORKER", "START", "END", "DURATION", "OUTCOME", "IN", "OUT", "DLQ", "TRIGGER", "PARAMS", "ERROR")
	for _, r := range runs {
		trigger := "scheduled"
		switch {
		case r.Backfill:
			trigger = "backfill"
		case r.Triggered:
			trigger = "triggered"
		}
		t.row(r.PipelineID, fmt.Sprint(r.RunNumber), fmt.Sprint(r.FencingToken), r.WorkerID,
			r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), humanize.RunDuration(r.Duration),
			string(r.Outcome), fmt.Sprint(r.Records.In), fmt.Sprint(r.Records.Out), fmt.Sprint(r.Records.DeadLettered),
			trigger, paramsCell(r.Params), oneLine(r.Error))
	}
	return t.flush()
}

// maxParamsCell bounds the PARAMS cell of "fleet runs", in characters:
// --json shows parameters whole.
const maxParamsCell = 60

// paramsCell is a run's parameters for a table cell: "k=v k2=v2" on one
// line, cut short, or "-" for none.
func paramsCell(params map[string]string) string {
	if len(params) == 0 {
		return "-"
	}
	s := texttable.Printable(runtime.FormatParams(params))
	if r := []rune(s); len(r) > maxParamsCell {
		s = string(r[:maxParamsCell-1]) + "…"
	}
	return s
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
