package gen

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/aftergraph"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/templates"
)

// checkAfterKeys checks after= and after_timeout= of one directive, whose
// schedule kinds are kinds, and puts them into p. Whether the ids name
// pipelines with the same schedule is checkAfter's, once every directive
// of the package is known.
func (c *checker) checkAfterKeys(d *directive, vals map[string]*value, kinds []*value, p *pipelineDecl) {
	v, has := vals["after"]
	if t, timed := vals["after_timeout"]; timed {
		if !has {
			c.ds.Add(d.pos(c.fset, t.KeyOff), "after_timeout without after: it bounds how long a slot waits for the pipelines after= names")
		}
		if t.Duration <= 0 {
			c.ds.Add(d.pos(c.fset, t.ValueOff), "after_timeout=%s must be positive (omit it to wait until the next slot)", t.Value)
		}
		p.AfterTimeout = t.Duration
	}
	if !has {
		return
	}
	if e, ok := vals["every"]; ok && len(kinds) == 1 {
		// An every run starts an interval after the previous one finished,
		// so upstream and downstream slots drift apart (the pool refuses
		// it too).
		msg := fmt.Sprintf("after needs cron=, not every=%s: an every run starts an interval after the previous one finished, so its slots drift with run times and rarely match an upstream's", e.Value)
		if e.Duration >= time.Second {
			msg += fmt.Sprintf("; cron=\"@every %s\" keeps the interval on a fixed grid", e.Value)
		}
		c.ds.Add(d.pos(c.fset, v.KeyOff), "%s", msg)
		return
	}
	if len(kinds) == 1 && kinds[0].Key.Name != "cron" {
		c.ds.Add(d.pos(c.fset, v.KeyOff), "after needs cron=, not %s: a slot waits for the same slot of its upstreams", kinds[0].Key.Name)
		return
	}
	raw, base := v.Value, v.ValueOff
	if v.Quoted {
		raw, base = strconv.Quote(v.Value), base+1 // ids need no escapes
	}
	seen := map[string]bool{}
	start := 0
	for _, part := range strings.Split(v.Str, ",") {
		id := strings.TrimSpace(part)
		off := base + start + strings.Index(part, id)
		start += len(part) + 1
		at := d.pos(c.fset, off)
		switch {
		case id == "":
			c.ds.Add(at, "after=%s names an empty pipeline id; write after=extract, or after=\"extract,clean\" for several", raw)
		case runtime.ValidatePipelineID(id) != nil:
			c.ds.Add(at, "after: %s is not a pipeline id: %s", quoteIfNeeded(id), runtime.PipelineIDRule)
		case id == p.ID:
			c.ds.Add(at, "after names %s, the pipeline itself", id)
		case seen[id]:
			c.ds.Add(at, "after names %s twice", id)
		default:
			p.After = append(p.After, id)
			p.afterAt = append(p.afterAt, at)
		}
		seen[id] = true
	}
}

// checkAfter checks the dependencies between the package's pipelines: an
// upstream of this package has the same schedule, and none depends on
// itself through others. An id no pipeline here has is an error only with
// distributed=off: with Redis the upstream may run in another worker.
func (c *checker) checkAfter(decls []pipelineDecl, w *templates.Worker) {
	byID := map[string]*pipelineDecl{}
	ids := make([]string, 0, len(decls))
	for i := range decls {
		if d := &decls[i]; d.ID != "" && byID[d.ID] == nil {
			byID[d.ID] = d
			ids = append(ids, d.ID)
		}
	}
	for i := range decls {
		p := &decls[i]
		for j, id := range p.After {
			up, ok := byID[id]
			if !ok {
				if w.Distributed == templates.DistributedOff {
					c.ds.Add(p.afterAt[j], "after names %s, which no pipeline of this package has%s; with distributed=off no other worker can run it", id, didYouMean(id, ids, ""))
				}
				continue
			}
			if up.Schedule != p.Schedule {
				c.ds.Add(p.afterAt[j], "after names %s (%s), which runs %s, but this pipeline runs %s: both need the same schedule, so that slot S is the same fire time",
					id, up.at, scheduleText(up.Schedule), scheduleText(p.Schedule))
			}
		}
	}
	c.afterCycles(decls, byID)
}

// afterCycles reports each cycle of after= between the package's
// pipelines once, at the after= of the pipeline where it was found.
func (c *checker) afterCycles(decls []pipelineDecl, byID map[string]*pipelineDecl) {
	var roots []string
	for i := range decls {
		if p := &decls[i]; byID[p.ID] == p {
			roots = append(roots, p.ID)
		}
	}
	for _, cy := range aftergraph.Cycles(roots, func(id string) ([]string, bool) {
		p, ok := byID[id]
		if !ok {
			return nil, false
		}
		return p.After, true
	}) {
		c.ds.Add(byID[cy.From].afterAt[cy.Edge], "after makes a cycle, %s: none of them would ever start", strings.Join(cy.Path, " → "))
	}
}

// scheduleText is a schedule as its directive writes it.
func scheduleText(s templates.Schedule) string {
	switch s.Kind {
	case templates.Every:
		return "every=" + templates.ShortDuration(s.Interval)
	case templates.Cron:
		return fmt.Sprintf("cron=%q", s.Expr)
	case templates.Continuous:
		return "continuous"
	case templates.Once:
		return "once"
	}
	return "no schedule"
}
