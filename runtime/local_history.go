package runtime

import (
	"context"
	"sync"
)

// localHistory is the run history a LocalCoordinator keeps in memory: per
// pipeline a ring of the last Limit runs, older than MaxAge dropped when
// read. It lives as long as the process.
type localHistory struct {
	mu     sync.Mutex
	policy RunHistoryPolicy
	rings  map[string]*runRing
}

// runRing holds up to cap(runs) records; next is where the next one goes
// once it is full.
type runRing struct {
	runs []RunRecord
	next int
}

func (h *localHistory) add(rec RunRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.policy.WithDefaults()
	if h.policy.Off {
		return
	}
	if h.rings == nil {
		h.rings = map[string]*runRing{}
	}
	r := h.rings[rec.PipelineID]
	if r == nil {
		r = &runRing{}
		h.rings[rec.PipelineID] = r
	}
	if len(r.runs) < p.Limit {
		r.runs = append(r.runs, rec)
		return
	}
	r.runs[r.next] = rec
	r.next = (r.next + 1) % len(r.runs)
}

// newest returns up to limit runs of id, newest first, none older than
// the policy's MaxAge before now's End.
func (h *localHistory) newest(id string, limit int, clock Clock) []RunRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rings[id]
	if r == nil {
		return []RunRecord{}
	}
	oldest := clock.Now().Add(-h.policy.WithDefaults().MaxAge)
	n := len(r.runs)
	out := make([]RunRecord, 0, n)
	for i := 0; i < n; i++ {
		// Newest first: the one before next, going back around the ring.
		rec := r.runs[((r.next-1-i)%n+n)%n]
		if rec.End.Before(oldest) {
			continue
		}
		out = append(out, rec)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

// SetRunHistory sets how much run history the coordinator keeps in memory
// (by default the last 100 runs per pipeline, for 7 days); Off keeps none.
func (c *LocalCoordinator) SetRunHistory(p RunHistoryPolicy) {
	c.history.mu.Lock()
	c.history.policy = p
	if p.Off {
		c.history.rings = nil
	}
	c.history.mu.Unlock()
}

// RunHistory returns the last runs of pipelineID this process made, newest
// first, at most limit (<= 0: all kept).
func (c *LocalCoordinator) RunHistory(_ context.Context, pipelineID string, limit int) ([]RunRecord, error) {
	return c.history.newest(pipelineID, limit, c.clock), nil
}

var _ RunHistoryReader = (*LocalCoordinator)(nil)
