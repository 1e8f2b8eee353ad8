package distributed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// TryAcquireLease tries to take pipelineID's lease for one run, in one Redis
// round trip that also mints the run's fencing token.
//
// runNumber is a positive slot (the run's scheduled start in Unix seconds),
// runtime.RunNumberAuto (the lease's run number becomes its fencing token)
// or runtime.RunNumberOnce. It returns:
//   - true, nil: the lease is held; CurrentLease returns it;
//   - false, nil: another worker holds it (or this worker already does);
//   - false, runtime.ErrSlotCompleted: the slot, or the Once run, already
//     completed somewhere in the fleet;
//   - false, err: Redis could not be asked (fail-safe: no run), unless
//     FallbackToLocal grants an unfenced local lease instead (true, nil).
func (c *RedisWorkerCoordinator) TryAcquireLease(ctx context.Context, pipelineID string, runNumber int64) (bool, error) {
	if pipelineID == "" {
		return false, errors.New("distributed: TryAcquireLease: empty pipeline id")
	}
	if runNumber < runtime.RunNumberOnce {
		return false, fmt.Errorf("%w: %d (want a slot > 0, RunNumberAuto or RunNumberOnce)", ErrInvalidRunNumber, runNumber)
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return false, ErrClosed
	case !c.running:
		c.mu.Unlock()
		return false, ErrNotStarted
	case c.leases[pipelineID] != nil || c.busy[pipelineID]:
		// This worker holds the lease, or is asking for or giving back it:
		// either way not free, and asking Redis would only cost a round trip.
		c.mu.Unlock()
		c.stats.contended.Add(1)
		return false, nil
	}
	c.busy[pipelineID] = true
	c.inFlight.Add(1)
	owner, workerID := c.owner, c.workerID
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.busy, pipelineID)
		c.mu.Unlock()
		c.inFlight.Done()
	}()

	req := leaseRequest{PipelineID: pipelineID, Owner: owner, Worker: workerID, Mode: runNumber}
	opCtx, cancel := c.opContext(ctx)
	sent := c.clock.Now()
	res, err := c.backend.acquire(opCtx, req)
	if err == nil && res.Outcome == outcomeUnregistered {
		// The record is missing (never written, or the server restarted
		// empty): write it whole, then ask once more.
		if err = c.heartbeat(opCtx); err == nil {
			sent = c.clock.Now()
			res, err = c.backend.acquire(opCtx, req)
		}
		if err == nil && res.Outcome == outcomeUnregistered {
			err = errors.New("distributed: the worker record vanished again right after it was written")
		}
	}
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		err = c.failure(fmt.Sprintf("acquire lease of %q", pipelineID), err)
		if c.s.FallbackToLocal {
			return c.acquireLocal(pipelineID, runNumber, err)
		}
		return false, err
	}
	c.noteOK()

	switch res.Outcome {
	case outcomeSlotCompleted:
		c.stats.slotCompleted.Add(1)
		return false, runtime.ErrSlotCompleted
	case outcomeHeld:
		c.stats.contended.Add(1)
		return false, nil
	}

	h := &heldLease{
		lease: runtime.Lease{
			PipelineID:   pipelineID,
			WorkerID:     workerID,
			RunNumber:    res.RunNumber,
			FencingToken: res.Token,
			AcquiredAt:   sent,
			ExpiresAt:    sent.Add(res.ValidFor),
		},
		mode:     runNumber,
		lastSent: sent,
	}
	var recordSent time.Time
	if c.takesOver() {
		recordSent = sent // the grant refreshed the record
	}
	h.setDeadline(c.s, sent, res.ValidFor, recordSent)
	h.stored = h.ref(owner).value()
	c.mu.Lock()
	stopped := !c.running
	late := !c.clock.Now().Before(h.deadline)
	if !stopped && !late {
		c.leases[pipelineID] = h
	}
	c.mu.Unlock()
	if stopped || late {
		// Stop ran meanwhile, or the reply took so long that the lease is
		// already past its renewal deadline: give it straight back.
		_ = c.giveBack(context.WithoutCancel(ctx), h, owner, false)
		if stopped {
			return false, ErrNotStarted
		}
		return false, fmt.Errorf("distributed: acquire lease of %q: reply arrived after the renewal deadline", pipelineID)
	}
	c.stats.acquired.Add(1)
	if c.log.Enabled(ctx, slog.LevelDebug) {
		c.log.Debug("distributed: lease acquired",
			"pipeline", pipelineID, "run", res.RunNumber, "token", res.Token)
	}
	return true, nil
}
