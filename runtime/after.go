package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/aftergraph"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// Dependencies between pipelines (ScheduledPipeline.After): runtime
// checks them before a pool starts; the engine waits for them
// (runtime/internal/engine/after.go).

// AfterPollInterval is how often a slot waiting for its upstreams asks the
// coordinator again: the most a downstream starts after its upstream
// completed the slot, and one small question a second per waiting
// pipeline.
const AfterPollInterval = engine.AfterPollInterval

// SlotCompletionReader is the capability (Capabilities.SlotCompletionReader)
// of coordinators that can tell whether one slot of a pipeline completed:
// what ScheduledPipeline.After waits for. The Redis coordinator answers for
// the whole fleet, whichever binary runs the upstream; the local one for
// its own process.
type SlotCompletionReader interface {
	// SlotCompleted reports whether slot (Unix seconds: a cron slot's fire
	// time, an every slot's window start) of pipelineID completed: a run
	// of that very slot succeeded, or was refused by a fenced store
	// because another run of it had written (OutcomeSlotDone). A later
	// slot's completion does not make an earlier slot completed. When the
	// coordinator no longer knows (the slot is older than its last
	// completed one and its run history does not reach back to it), the
	// answer is false: a downstream skips a slot rather than start it
	// unsure.
	SlotCompleted(ctx context.Context, pipelineID string, slot int64) (bool, error)
}

// errAfterSchedule is the problem of After on a schedule without fixed
// slots.
var errAfterSchedule = errors.New("after needs a cron schedule")

// afterProblems lists the problems of sp's own After settings; those
// between pipelines are the pool's (afterPoolProblems).
func (sp *ScheduledPipeline) afterProblems() []error {
	var errs []error
	if sp.AfterTimeout < 0 {
		errs = append(errs, fmt.Errorf("negative AfterTimeout %s", sp.AfterTimeout))
	}
	if len(sp.After) == 0 {
		if sp.AfterTimeout > 0 {
			errs = append(errs, errors.New("AfterTimeout without After"))
		}
		return errs
	}
	switch sp.Schedule.Kind() {
	case ScheduleCron:
	case ScheduleEvery:
		// An every run starts an interval after the previous one
		// finished and is numbered by the window it starts in, so an
		// upstream and its downstream, each drifting by its own run
		// times, rarely share a window: the downstream would skip most
		// of its slots. "@every" is the same interval on a fixed grid.
		msg := "an every run starts an interval after the previous one finished, so its slots drift with run times and rarely match an upstream's"
		if iv := sp.Schedule.Interval(); iv >= time.Second {
			msg += fmt.Sprintf("; cron=\"@every %s\" keeps the interval on a fixed grid", iv)
		}
		errs = append(errs, fmt.Errorf("%w, not %s: %s", errAfterSchedule, sp.Schedule.String(), msg))
	default:
		errs = append(errs, fmt.Errorf("%w, not %s", errAfterSchedule, sp.Schedule.String()))
	}
	seen := make(map[string]bool, len(sp.After))
	for _, id := range sp.After {
		switch {
		case id == "":
			errs = append(errs, errors.New("an empty pipeline id in After"))
		case id == sp.PipelineID:
			errs = append(errs, fmt.Errorf("depends on itself: %q in After", id))
		case seen[id]:
			errs = append(errs, fmt.Errorf("%q twice in After", id))
		default:
			if err := ValidatePipelineID(id); err != nil {
				errs = append(errs, fmt.Errorf("in After: %w", err))
			}
		}
		seen[id] = true
	}
	return errs
}

// afterPoolProblems checks the dependencies between a pool's pipelines:
// the coordinator can answer SlotCompleted; each upstream is registered
// here (unless the coordinator is fleet-wide, when it may run in another
// binary) with the same schedule; no cycle. coord nil is the local
// coordinator the pool makes. The coordinator's capabilities are read only
// when a pipeline has After.
func afterPoolProblems(pipelines []*ScheduledPipeline, coord Coordinator) []error {
	byID := make(map[string]*ScheduledPipeline, len(pipelines))
	var downstream []*ScheduledPipeline
	for _, sp := range pipelines {
		if sp == nil || sp.PipelineID == "" {
			continue
		}
		if _, dup := byID[sp.PipelineID]; !dup {
			byID[sp.PipelineID] = sp
		}
		if len(sp.After) > 0 && sp.Schedule.Kind() == ScheduleCron {
			// Other kinds are refused by afterProblems already.
			downstream = append(downstream, sp)
		}
	}
	if len(downstream) == 0 {
		return nil
	}
	reader, inProcess, coordName := true, true, "the local coordinator"
	if coord != nil {
		caps := coord.Capabilities()
		reader, inProcess, coordName = caps.SlotCompletionReader != nil, caps.LocalLeaser != nil, fmt.Sprintf("%T", coord)
	}
	var errs []error
	bad := func(sp *ScheduledPipeline, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: pipeline %q: %s", ErrInvalidPipeline, sp.PipelineID, fmt.Sprintf(format, args...)))
	}
	for _, sp := range downstream {
		if !reader {
			bad(sp, "After needs a coordinator that can tell whether a pipeline completed a slot (a runtime.SlotCompletionReader); %s cannot", coordName)
			continue
		}
		for _, id := range sp.After {
			up, ok := byID[id]
			if !ok {
				if inProcess && id != "" {
					bad(sp, "After names %q, which is not registered in this pool: with an in-process coordinator only this pool's pipelines complete slots", id)
				}
				continue
			}
			if up.Schedule.String() != sp.Schedule.String() {
				bad(sp, "After names %q, whose schedule %s is not this pipeline's %s: slot S must be the same fire time in both", id, up.Schedule.String(), sp.Schedule.String())
			}
		}
	}
	for _, cycle := range afterCycles(pipelines, byID) {
		errs = append(errs, fmt.Errorf("%w: After makes a cycle, which never starts: %s", ErrInvalidPipeline, cycle))
	}
	return errs
}

// afterCycles returns each cycle of After edges between the pipelines of
// byID once, as "a → b → a", in the order of pipelines.
func afterCycles(pipelines []*ScheduledPipeline, byID map[string]*ScheduledPipeline) []string {
	roots := make([]string, 0, len(pipelines))
	for _, sp := range pipelines {
		if sp != nil && byID[sp.PipelineID] == sp {
			roots = append(roots, sp.PipelineID)
		}
	}
	var cycles []string
	for _, c := range aftergraph.Cycles(roots, func(id string) ([]string, bool) {
		sp, ok := byID[id]
		if !ok {
			return nil, false
		}
		return sp.After, true
	}) {
		quoted := make([]string, len(c.Path))
		for i, id := range c.Path {
			quoted[i] = strconv.Quote(id)
		}
		cycles = append(cycles, strings.Join(quoted, " → "))
	}
	return cycles
}

// UpstreamSkipReason is the reason a slot skipped for its upstream is
// given in logs, /status and the webhook event.
func UpstreamSkipReason(upstream string, slot time.Time) string {
	return engine.UpstreamSkipReason(upstream, slot)
}
