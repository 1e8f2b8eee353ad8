package runtime

import (
	"context"
	"sync/atomic"
)

// localHistory is the run history a LocalCoordinator keeps in memory: per
// pipeline a ring of the last Limit runs (runRing, held by value in the
// pipeline's entry, under its own lock, so runs of different pipelines
// never contend), older than MaxAge dropped when read. It lives as long as
// the process.
type localHistory struct {
	policy atomic.Pointer[RunHistoryPolicy] // nil: the defaults
}

func (h *localHistory) current() RunHistoryPolicy {
	if p := h.policy.Load(); p != nil {
		return *p
	}
	return RunHistoryPolicy{}.WithDefaults()
}

// recordRun adds rec to e's history; e is the entry of rec.PipelineID.
// The pool calls it after the run's lease is given back.
func (c *LocalCoordinator) recordRun(e *localEntry, rec RunRecord) {
	p := c.history.current()
	if p.Off {
		return
	}
	e.mu.Lock()
	e.history.add(rec, rec.PipelineID, p.Limit)
	e.mu.Unlock()
}

// FinishRun gives the lease of rec.PipelineID back, completing it when
// rec.Outcome is OutcomeSucceeded or OutcomeSlotDone, and records rec in
// the run history. RunNumber and WorkerID are taken from the lease held;
// FencingToken is 0, as in every local lease. A pool running on the
// LocalCoordinator itself does the same without this call; a coordinator
// wrapping one reaches it through Capabilities.RunRecorder.
func (c *LocalCoordinator) FinishRun(_ context.Context, rec RunRecord) error {
	e := c.entry(rec.PipelineID)
	e.mu.Lock()
	if e.held {
		rec.RunNumber, rec.FencingToken = e.runNumber, 0
		if w := c.workerID.Load(); w != nil {
			rec.WorkerID = *w
		}
	}
	e.mu.Unlock()
	c.releaseEntry(e, rec.Outcome == OutcomeSucceeded || rec.Outcome == OutcomeSlotDone)
	c.recordRun(e, rec)
	return nil
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
			e.history = runRing{} // the buffer goes with it
			e.mu.Unlock()
		}
		c.mu.RUnlock()
	}
}

// RunHistory returns the last runs of pipelineID this process made, newest
// first, at most limit (<= 0: all kept), none older than the MaxAge. Their
// times are at the precision of the shared (Redis) history: End in whole
// milliseconds, Duration in whole microseconds, Start = End - Duration, in
// the local zone.
func (c *LocalCoordinator) RunHistory(_ context.Context, pipelineID string, limit int) ([]RunRecord, error) {
	oldest := c.clock.Now().Add(-c.history.current().MaxAge)
	e := c.entry(pipelineID)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.history.n == 0 {
		return []RunRecord{}, nil
	}
	return e.history.newest(pipelineID, limit, func(r RunRecord) bool { return !r.End.Before(oldest) }), nil
}

var _ RunHistoryReader = (*LocalCoordinator)(nil)
