package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/reltime"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// backfillFlags are backfill's own flags.
type backfillFlags struct {
	from, to       string
	fromAt, toAt   time.Time
	parallel       int
	reprocess      bool
	downstream     bool
	status, cancel bool
}

// parseWhen reads --from or --to (reltime.Parse).
func parseWhen(flagName, s string, now time.Time) (time.Time, error) {
	t, err := reltime.Parse(s, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %w", flagName, err)
	}
	return t, nil
}

// checkBackfill checks backfill's flags together: either --status, or
// --cancel, or a range with --from and --to.
func checkBackfill(fl *cmdFlags, now time.Time) error {
	b := &fl.backfill
	if b.status && b.cancel {
		return usageError{"backfill: --status and --cancel do not go together"}
	}
	if b.status || b.cancel {
		what := "--status"
		if b.cancel {
			what = "--cancel"
		}
		if b.from != "" || b.to != "" || b.parallel != 0 || b.reprocess || b.downstream {
			return usageError{fmt.Sprintf("backfill %s takes no --from, --to, --parallel, --reprocess or --downstream", what)}
		}
		return nil
	}
	if b.from == "" || b.to == "" {
		return usageError{"backfill needs --from and --to (or --status, or --cancel)"}
	}
	var err error
	if b.fromAt, err = parseWhen("from", b.from, now); err != nil {
		return usageError{err.Error()}
	}
	if b.toAt, err = parseWhen("to", b.to, now); err != nil {
		return usageError{err.Error()}
	}
	if !b.fromAt.Before(b.toAt) {
		return usageError{fmt.Sprintf("backfill: --from %s is not before --to %s", b.fromAt.UTC().Format(time.RFC3339), b.toAt.UTC().Format(time.RFC3339))}
	}
	if b.parallel < 0 {
		return usageError{fmt.Sprintf("backfill: --parallel %d: must be 1 or more", b.parallel)}
	}
	return nil
}

// checkTriggerSlot checks trigger's --slot and --reprocess: --reprocess
// only with --slot.
func checkTriggerSlot(fl *cmdFlags, now time.Time) error {
	if fl.slot == "" {
		if fl.backfill.reprocess {
			return usageError{"trigger --reprocess needs --slot: a trigger without one runs outside the slots"}
		}
		return nil
	}
	t, err := parseWhen("slot", fl.slot, now)
	if err != nil {
		return usageError{err.Error()}
	}
	fl.slotAt = t
	return nil
}

// triggerSlot runs one slot of id as a backfill of one.
func (c *command) triggerSlot(ctx context.Context, id string, fl cmdFlags) error {
	req := distributed.BackfillRequest{PipelineID: id, Reprocess: fl.backfill.reprocess, Params: fl.params.params, Reason: strings.TrimSpace(fl.reason)}
	p, err := c.in.TriggerSlot(ctx, req, fl.slotAt)
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(p)
	}
	with := ""
	if len(p.Request.Params) > 0 {
		with = " with " + runtime.FormatParams(p.Request.Params)
	}
	_, err = fmt.Fprintf(c.out, "triggered slot %s of %s%s: one replica runs it as a backfill of one slot%s; fleet backfill %s --status shows it\n",
		stamp(p.Request.From), id, with, reprocessNote(p.Request.Reprocess), id)
	return err
}

// backfill starts, shows or cancels id's backfill.
func (c *command) backfill(ctx context.Context, id string, fl cmdFlags, opts ...distributed.ControlOption) error {
	b := fl.backfill
	switch {
	case b.cancel:
		return c.report(c.in.CancelBackfill(ctx, id, opts...))
	case b.status:
		p, err := c.in.Backfill(ctx, id)
		if errors.Is(err, distributed.ErrNoBackfill) && !errors.Is(err, distributed.ErrUnknownPipeline) {
			return fmt.Errorf("no backfill of %s: none was started, or the last one ended more than %s ago, or Redis lost its data since it ended (a running backfill is written back by the replicas; a finished one is not)",
				id, keepText(distributed.BackfillKeep))
		}
		if err != nil {
			return err
		}
		return c.backfillProgress(p)
	}
	req := distributed.BackfillRequest{PipelineID: id, From: b.fromAt, To: b.toAt, Parallel: b.parallel, Reprocess: b.reprocess,
		Downstream: b.downstream, Reason: strings.TrimSpace(fl.reason)}
	p, err := c.in.StartBackfill(ctx, req)
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(p)
	}
	_, err = fmt.Fprintf(c.out, "backfill of %s started: %d slots in [%s, %s), %d at a time, oldest first%s; follow it with: fleet backfill %s --status\n",
		id, p.Total, stamp(p.Request.From), stamp(p.Request.To), p.Request.Parallel, reprocessNote(p.Request.Reprocess), id)
	if err == nil && len(p.Request.Dependents) > 0 {
		_, err = fmt.Fprintf(c.out, "and of its dependents %s over the same slots, each slot once %s has completed it: fleet backfill ID --status for each\n",
			strings.Join(p.Request.Dependents, ", "), id)
	}
	return err
}

// keepText is how long a finished backfill is kept, in days when whole.
func keepText(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

func reprocessNote(on bool) string {
	if on {
		return ", completed slots run again"
	}
	return ", completed slots skipped"
}

// backfillProgress prints a backfill's progress.
func (c *command) backfillProgress(p distributed.BackfillProgress) error {
	if c.json {
		return c.emit(p)
	}
	r := p.Request
	lines := []string{
		fmt.Sprintf("pipeline   %s", r.PipelineID),
		fmt.Sprintf("state      %s", p.State),
		fmt.Sprintf("range      [%s, %s), %d slots, %d at a time%s", stamp(r.From), stamp(r.To), p.Total, r.Parallel, reprocessNote(r.Reprocess)),
		fmt.Sprintf("progress   done %d, skipped %d, failed %d, in flight %d, remaining %d", p.Done, p.Skipped, p.Failed, len(p.InFlight), p.Remaining()),
		fmt.Sprintf("started    %s by %s", stamp(idTime(p.ID)), orDash(r.Actor)),
	}
	if r.Reason != "" {
		lines = append(lines, "reason     "+oneLine(r.Reason))
	}
	if len(r.Dependents) > 0 {
		lines = append(lines, "downstream "+strings.Join(r.Dependents, ", "))
	}
	if r.WaitUpstream {
		lines = append(lines, "waits for  its upstreams to complete each slot first")
	}
	if !p.Ended.IsZero() {
		lines = append(lines, "ended      "+stamp(p.Ended))
	}
	for _, s := range p.InFlight {
		lines = append(lines, fmt.Sprintf("running    %s on %s", stamp(s.Slot), s.Worker))
	}
	for _, e := range p.Errors {
		lines = append(lines, fmt.Sprintf("failed     %s: %s", stamp(e.Slot), oneLine(e.Error)))
	}
	_, err := fmt.Fprintln(c.out, strings.Join(lines, "\n"))
	return err
}

// idTime is when the backfill with id (Unix ms) began.
func idTime(id string) time.Time {
	var ms int64
	_, _ = fmt.Sscan(id, &ms)
	return time.UnixMilli(ms)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// backfillCell is a running backfill in a row of fleet pipelines:
// finished / total, the failed among them, and the slot in flight.
func backfillCell(b *distributed.BackfillSummary) string {
	if b == nil {
		return "-"
	}
	cell := fmt.Sprintf("%d/%d", b.Done+b.Skipped+b.Failed, b.Total)
	if b.Failed > 0 {
		cell += fmt.Sprintf(" (%d failed)", b.Failed)
	}
	if b.Current != nil {
		cell += " at " + stamp(*b.Current)
	}
	return cell
}
