package distributed

import (
	"errors"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// localState is what a worker remembers on its own for FallbackToLocal
// leases, so the slot rule still holds within this process while Redis is
// away.
type localState struct {
	done     map[string]int64     // last completed slot per pipeline
	onceDone map[string]time.Time // Once run completed, until this time
	seq      map[string]int64     // run numbers for Auto and Once runs
}

func newLocalState() localState {
	return localState{done: map[string]int64{}, onceDone: map[string]time.Time{}, seq: map[string]int64{}}
}

// complete records a run finished on a local lease.
func (l *localState) complete(pipelineID string, mode int64, onceUntil time.Time) {
	switch {
	case mode > 0:
		l.done[pipelineID] = max(l.done[pipelineID], mode)
	case mode == runtime.RunNumberOnce:
		l.onceDone[pipelineID] = onceUntil
	}
}

// acquireLocal grants an unfenced local lease because Redis failed with
// cause and FallbackToLocal is set. Other replicas may do the same, so a run
// may happen more than once while Redis is away: the warning says so each
// time, and Status counts it.
func (c *RedisWorkerCoordinator) acquireLocal(req leaseRequest, cause error) (bool, error) {
	pipelineID, runNumber := req.PipelineID, req.ruleMode()
	now := c.clock.Now()
	c.mu.Lock()
	if !c.running {
		c.mu.Unlock()
		return false, ErrNotStarted
	}
	switch {
	case runNumber > 0 && runNumber <= c.local.done[pipelineID]:
		c.mu.Unlock()
		c.stats.slotCompleted.Add(1)
		return false, runtime.ErrSlotCompleted
	case runNumber == runtime.RunNumberOnce && now.Before(c.local.onceDone[pipelineID]):
		c.mu.Unlock()
		c.stats.slotCompleted.Add(1)
		return false, runtime.ErrSlotCompleted
	}
	run := req.Mode
	if run <= 0 {
		c.local.seq[pipelineID]++
		run = c.local.seq[pipelineID]
	}
	h := &heldLease{
		lease: runtime.Lease{
			PipelineID: pipelineID,
			WorkerID:   c.workerID,
			RunNumber:  run,
			Slot:       req.slot(),
			// 0: unfenced. Real tokens are > 0, so a store that checks tokens
			// can tell and refuse.
			FencingToken: 0,
			AcquiredAt:   now,
			ExpiresAt:    now.Add(c.s.LeaseTTL),
		},
		mode:     runNumber,
		fallback: true,
	}
	c.leases[pipelineID] = h
	c.mu.Unlock()
	c.stats.fallbackLeases.Add(1)
	what := "distributed: Redis unreachable; "
	if errors.Is(cause, ErrRedisRefusing) {
		what = "distributed: Redis refused the acquire; "
	}
	c.log.Warn(what+"running on an unfenced local lease (FallbackToLocal): other replicas may run this too",
		"pipeline", pipelineID, "run", run, "error", cause)
	return true, nil
}
