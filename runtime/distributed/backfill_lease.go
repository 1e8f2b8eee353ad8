package distributed

import (
	"context"
	"errors"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// The coordinator as the pool's runtime.Backfiller: a claimed slot is a
// runtime.Lease (Slot and Backfill set) that the coordinator keeps
// renewed in the same loop as its pipeline leases (renewLoop), and gives up locally at its
// renewal deadline when Redis cannot be reached: the slot's lease lapses
// in Redis by then, and another replica may be handed the slot, so the
// run must stop first. A slot found lost is reported to the lease-lost
// callback, which cancels its run.

var _ runtime.Backfiller = (*RedisWorkerCoordinator)(nil)

// heldBackfill is a backfill slot this worker runs.
type heldBackfill struct {
	claim    backfillClaim
	lease    runtime.Lease
	deadline time.Time // given up locally if not renewed by then
}

// ClaimBackfill hands this worker the next slot of pipelineID's running
// backfill (runtime.Backfiller), the slots being schedule's.
func (c *RedisWorkerCoordinator) ClaimBackfill(ctx context.Context, pipelineID string, schedule runtime.Schedule) (runtime.BackfillSlot, bool, error) {
	sent := c.clock.Now()
	cl, turn, err := c.claimBackfillSlot(ctx, pipelineID, schedule)
	if err != nil || turn != backfillClaimed {
		return runtime.BackfillSlot{}, false, err
	}
	lease := runtime.Lease{PipelineID: pipelineID, WorkerID: c.workerID, RunNumber: cl.Slot.Unix(), Slot: true, Backfill: true,
		Reprocess: cl.Reprocess, FencingToken: cl.Token, AcquiredAt: sent, ExpiresAt: sent.Add(c.s.LeaseTTL)}
	c.bfMu.Lock()
	if c.bfHeld == nil {
		c.bfHeld = map[int64]*heldBackfill{}
	}
	c.bfHeld[cl.Token] = &heldBackfill{claim: cl, lease: lease, deadline: sent.Add(c.s.LeaseRenewalDeadline)}
	c.bfMu.Unlock()
	if cl.Again {
		c.log.Info("distributed: claimed a backfill slot whose earlier holder's lease expired", "pipeline", pipelineID,
			"slot", cl.Slot.Format(time.RFC3339), "token", cl.Token)
	}
	return runtime.BackfillSlot{Lease: lease, Params: cl.Params, WaitUpstream: cl.WaitUpstream}, true, nil
}

// errBackfillNotHeld is the error of FinishBackfill for a slot this worker
// does not hold (given up at its renewal deadline, or never claimed).
var errBackfillNotHeld = errors.New("distributed: the backfill slot is not held by this worker")

// FinishBackfill gives a claimed slot back and records how it ended
// (runtime.Backfiller): rec nil, or a run that found its slot done, counts
// it skipped; a success done; anything else failed, and the pipeline's
// MaxConsecutiveErrors failed slots in a row stop the backfill.
func (c *RedisWorkerCoordinator) FinishBackfill(ctx context.Context, lease runtime.Lease, rec *history.Record) error {
	c.bfMu.Lock()
	h := c.bfHeld[lease.FencingToken]
	delete(c.bfHeld, lease.FencingToken)
	c.bfMu.Unlock()
	if h == nil {
		return errBackfillNotHeld
	}
	o := backfillSlotFailed
	switch {
	case rec != nil && rec.Outcome == history.OutcomeCancelled && rec.Start.IsZero():
		o = backfillSlotReleased
	case rec == nil || rec.Outcome == history.OutcomeSlotDone:
		o = backfillSlotSkipped
	case rec.Outcome == history.OutcomeSucceeded:
		o = backfillSlotDone
	}
	c.mu.Lock()
	maxFailed := c.failRules[lease.PipelineID].MaxConsecutiveErrors
	c.mu.Unlock()
	ok, err := c.finishBackfillSlot(ctx, h.claim, o, rec, maxFailed)
	if err == nil && !ok {
		c.log.Warn("distributed: a finished backfill slot was no longer this worker's; its end is not counted (another replica has it)",
			"pipeline", lease.PipelineID, "slot", h.claim.Slot.Format(time.RFC3339), "token", lease.FencingToken)
	}
	return err
}

// renewBackfills renews each held slot, reporting the ones Redis no
// longer has as this worker's, and those past their renewal deadline. The
// renewal loop calls it after each round of the pipeline leases'; a
// worker holding no slot pays one map read.
func (c *RedisWorkerCoordinator) renewBackfills() {
	c.bfMu.Lock()
	held := make([]*heldBackfill, 0, len(c.bfHeld))
	for _, h := range c.bfHeld {
		held = append(held, h)
	}
	c.bfMu.Unlock()
	for _, h := range held {
		sent := c.clock.Now()
		ctx, cancel := context.WithTimeout(withOp(context.Background(), opRenew), c.s.renewEvery)
		ok, err := c.renewBackfillSlot(ctx, h.claim)
		cancel()
		switch {
		case err == nil && ok:
			c.bfMu.Lock()
			h.deadline = sent.Add(c.s.LeaseRenewalDeadline)
			c.bfMu.Unlock()
		case err == nil:
			c.backfillLost(h, "gone or handed to another worker")
		case !c.clock.Now().Before(h.deadline):
			c.backfillLost(h, "renewal deadline passed")
		}
	}
}

// backfillLost forgets h and reports its lease lost, once.
func (c *RedisWorkerCoordinator) backfillLost(h *heldBackfill, reason string) {
	c.bfMu.Lock()
	_, held := c.bfHeld[h.lease.FencingToken]
	delete(c.bfHeld, h.lease.FencingToken)
	c.bfMu.Unlock()
	if !held {
		return
	}
	c.stats.lost.Add(1)
	c.log.Warn("distributed: backfill slot's lease lost; cancelling its run",
		"pipeline", h.lease.PipelineID, "slot", h.claim.Slot.Format(time.RFC3339), "token", h.lease.FencingToken, "reason", reason)
	if cb := c.lostCB.Load(); cb != nil {
		(*cb)(h.lease.PipelineID, h.lease)
	}
}
