package fleet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/reltime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// audit prints the audit log, newest first.
func (c *command) audit(ctx context.Context, q distributed.AuditQuery) error {
	entries, err := c.in.Audit(ctx, q)
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(entries)
	}
	t := newTable(c.out, "AT", "PIPELINE", "ACTION", "ACTOR", "REASON", "UNTIL", "PARAMS")
	for _, e := range entries {
		until := "-"
		if !e.Until.IsZero() {
			until = e.Until.UTC().Format(time.RFC3339)
		}
		t.row(e.At.UTC().Format(time.RFC3339), e.PipelineID, string(e.Action), oneLine(e.Actor), oneLine(e.Reason), until, paramsCell(e.Params))
	}
	return t.flush()
}

// parseUntil reads --until: an RFC 3339 time, or a duration from now
// ("2h", "90m").
func parseUntil(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d <= 0 {
		return time.Time{}, fmt.Errorf("--until %s: a duration from now must be positive", s)
	}
	t, err := reltime.Parse(s, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("--until %w", err)
	}
	return t, nil
}

// controlOptions are the options of pause, resume and trigger from the
// command line's --reason and --until.
func controlOptions(fl cmdFlags) []distributed.ControlOption {
	var opts []distributed.ControlOption
	if r := strings.TrimSpace(fl.reason); r != "" {
		opts = append(opts, distributed.WithReason(r))
	}
	if !fl.untilAt.IsZero() {
		opts = append(opts, distributed.WithUntil(fl.untilAt))
	}
	if len(fl.params.params) > 0 {
		opts = append(opts, distributed.WithParams(fl.params.params))
	}
	return opts
}

// pauseNotes says, under the pipelines table, why and until when each
// paused pipeline is paused, where a row has no room for it.
func (c *command) pauseNotes(rows []distributed.PipelineInfo) error {
	for _, r := range rows {
		if !r.Paused || r.PausedReason == "" && r.PausedUntil == nil {
			continue
		}
		note := "paused " + r.PipelineID
		if r.PausedBy != "" {
			note += " by " + r.PausedBy
		}
		if r.PausedReason != "" {
			note += ": " + oneLine(r.PausedReason)
		}
		if r.PausedUntil != nil {
			note += " (until " + r.PausedUntil.UTC().Format(time.RFC3339) + ")"
		}
		if _, err := fmt.Fprintf(c.out, "\n%s\n", oneLine(note)); err != nil {
			return err
		}
	}
	return nil
}
