package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agora-etl/agora/internal/aftergraph"
	"github.com/agora-etl/agora/internal/typo"
	"github.com/agora-etl/agora/runtime"
)

// afterKeys are the pipeline keys of dependencies: after = ["extract"]
// (runtime.ScheduledPipeline.After) and after_timeout.
var afterKeys = []string{"after", "after_timeout"}

// after reads after and after_timeout of pipeline p, the table m at at.
// Whether each id names a pipeline of the file with the same schedule is
// afterAcross's, once every pipeline is read.
func (d *decoder) after(m map[string]any, at path, p *Pipeline) {
	v, has := m["after"]
	if t, ok := d.duration(m, at, "after_timeout", false); ok {
		p.AfterTimeout = t
		if !has {
			d.atKey(at.child("after_timeout"), "%s: after_timeout without after: it bounds how long a slot waits for the pipelines after names", at.child("after_timeout"))
		}
	}
	if !has {
		return
	}
	list, ok := v.([]any)
	if !ok {
		d.wrongType(at.child("after"), "an array of pipeline ids", v)
		return
	}
	for i, el := range list {
		ep := at.child("after").index(i)
		id, isStr := el.(string)
		switch {
		case !isStr:
			d.wrongType(ep, "a string", el)
		case id == "":
			d.atValue(ep, "%s: an empty pipeline id", ep)
		case runtime.ValidatePipelineID(id) != nil:
			d.atValue(ep, "%s: %s", ep, runtime.ValidatePipelineID(id))
		case id == p.ID:
			d.atValue(ep, "%s: %q is this pipeline: a pipeline cannot wait for itself", ep, id)
		case slices.Contains(p.After, id):
			d.atValue(ep, "%s: %q is named twice", ep, id)
		default:
			p.After = append(p.After, id)
			p.afterAt = append(p.afterAt, ep)
		}
	}
	// A missing or broken schedule is reported already; only a mode known
	// to lack slots is reported here.
	switch mode := p.Schedule.Mode; {
	case mode == "continuous" || mode == "once":
		d.atKey(at.child("after"), "%s: after needs a cron schedule (mode = %q has no slots to wait for)", at.child("after"), mode)
		p.After, p.afterAt = nil, nil
	case mode == "every":
		// An every run starts an interval after the previous one finished,
		// so upstream and downstream slots drift apart (docs/schedules.md).
		d.atKey(at.child("after"), "%s: after needs a cron schedule, not mode = \"every\": an every run starts an interval after the previous one finished, so its slots drift with run times and rarely match an upstream's; mode = \"cron\" with expr = \"@every <interval>\" keeps the interval on a fixed grid", at.child("after"))
		p.After, p.afterAt = nil, nil
	}
}

// afterAcross checks the dependencies between the file's pipelines: every
// upstream is a pipeline of the file (a config-only worker runs its file's
// pipelines), with the same schedule, and none waits for itself through
// others.
func (d *decoder) afterAcross(f *File) {
	byID := make(map[string]*Pipeline, len(f.Pipelines))
	for _, p := range f.Pipelines {
		byID[p.ID] = p
	}
	ids := f.PipelineIDs()
	for _, p := range f.Pipelines {
		for i, id := range p.After {
			up, ok := byID[id]
			switch {
			case !ok:
				hint := ""
				if s := typo.Closest(id, ids); s != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", s)
				}
				d.atValue(p.afterAt[i], "%s: no pipeline %q in this file%s: a pipeline waits for pipelines of its own file", p.afterAt[i], id, hint)
			case up.Schedule.Mode == "" || p.Schedule.Mode == "":
				// A schedule that did not decode is reported already.
			case up.Schedule.String() != p.Schedule.String():
				d.atValue(p.afterAt[i], "%s: %q runs %s, this pipeline %s: both need the same schedule, so that slot S is the same fire time",
					p.afterAt[i], id, up.Schedule.String(), p.Schedule.String())
			}
		}
	}
	roots := make([]string, len(f.Pipelines))
	for i, p := range f.Pipelines {
		roots[i] = p.ID
	}
	for _, c := range aftergraph.Cycles(roots, func(id string) ([]string, bool) {
		p, ok := byID[id]
		if !ok {
			return nil, false
		}
		return p.After, true
	}) {
		at := byID[c.From].afterAt[c.Edge]
		d.atValue(at, "%s: after makes a cycle, %s: none of them would ever start", at, strings.Join(c.Path, " → "))
	}
}

// afterText is the summary's line of p's dependencies: "extract, clean,
// each slot waiting until the next slot" or "… at most 20m".
func (p *Pipeline) afterText() string {
	wait := "until the next slot"
	if p.AfterTimeout > 0 {
		wait = "at most " + shortDuration(p.AfterTimeout)
	}
	return strings.Join(p.After, ", ") + " (each slot waits for theirs " + wait + ")"
}
