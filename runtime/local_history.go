package runtime

import (
	"context"
	"sync/atomic"
)

// localHistory is the run history a LocalCoordinator keeps in memory: per
// pipeline a ring of the last Limit runs (held in the pipeline's entry,
// under its own lock, so runs of different pipelines never contend), older
// than MaxAge dropped when read. It lives as long as the process.
type localHistory struct {
	policy atomic.Pointer[RunHistoryPolicy] // nil: the defaults
}

func (h *localHistory) current() RunHistoryPolicy {
	if p := h.policy.Load(); p != nil {
		return *p
	}
	return RunHistoryPolicy{}.WithDefaults()
}

// runRing holds up to Limit records; next is where the next one goes once
// it is full.
type runRing struct {
	runs []RunRecord
	next int
}

func (r *runRing) add(rec RunRecord, limit int) {
	if len(r.runs) > limit {
		// The limit was lowered: keep the newest.
		r.runs = r.newest(limit, nil)
		for i, j := 0, len(r.runs)-1; i < j; i, j = i+1, j-1 {
			r.runs[i], r.runs[j] = r.runs[j], r.runs[i]
		}
		r.next = 0
	}
	if len(r.runs) < limit {
		r.runs = append(r.runs, rec)
		return
	}
	r.runs[r.next] = rec
	r.next = (r.next + 1) % len(r.runs)
}

// newest returns up to limit records, newest first, that keep accepts.
func (r *runRing) newest(limit int, keep func(RunRecord) bool) []RunRecord {
	n := len(r.runs)
	size := n
	if limit > 0 && limit < n {
		size = limit
	}
	out := make([]RunRecord, 0, size)
	for i := 0; i < n; i++ {
		// Newest first: the one before next, going back around the ring.
		rec := r.runs[((r.next-1-i)%n+n)%n]
		if keep != nil && !keep(rec) {
			continue
		}
		out = append(out, rec)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// recordRun adds rec to e's history; the pool calls it after the run's
// lease is given back.
func (c *LocalCoordinator) recordRun(e *localEntry, rec RunRecord) {
	p := c.history.current()
	if p.Off {
		return
	}
	e.mu.Lock()
	if e.history == nil {
		e.history = &runRing{}
	}
	e.history.add(rec, p.Limit)
	e.mu.Unlock()
}

// SetRunHistory sets how much run history the coordinator keeps in memory
// (by default the last 100 runs per pipeline, for 7 days); Off keeps none
// and forgets what was kept.
func (c *LocalCoordinator) SetRunHistory(p RunHistoryPolicy) {
	if !p.Off {
		p = p.WithDefaults()
	}
	c.history.policy.Store(&p)
	if p.Off {
		c.mu.RLock()
		for _, e := range c.entries {
			e.mu.Lock()
			e.history = nil
			e.mu.Unlock()
		}
		c.mu.RUnlock()
	}
}

// RunHistory returns the last runs of pipelineID this process made, newest
// first, at most limit (<= 0: all kept), none older than the MaxAge.
func (c *LocalCoordinator) RunHistory(_ context.Context, pipelineID string, limit int) ([]RunRecord, error) {
	oldest := c.clock.Now().Add(-c.history.current().MaxAge)
	e := c.entry(pipelineID)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.history == nil {
		return []RunRecord{}, nil
	}
	return e.history.newest(limit, func(r RunRecord) bool { return !r.End.Before(oldest) }), nil
}

var _ RunHistoryReader = (*LocalCoordinator)(nil)
