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
// runNumber is a slot (runtime.SlotRun: the run's scheduled start), a
// counted run (a positive number of the caller's: one holder at a time and
// a token above every earlier one, with no slot rule, so it is granted
// after Redis lost its data too), runtime.RunNumberAuto (the lease's run
// number becomes its fencing token) or runtime.RunNumberOnce. It returns:
//   - true, nil: the lease is held; CurrentLease returns it;
//   - false, nil: another worker holds it (or this worker already does);
//   - false, runtime.ErrSlotCompleted: the slot, or the Once run, already
//     completed somewhere in the fleet; or, wrapped in ErrStateLost, the
//     slot is older than the coordination state (see epoch.go) and may
//     have run before that state was lost;
//   - false, err: Redis could not be asked (fail-safe: no run), unless
//     FallbackToLocal grants an unfenced local lease instead (true, nil).
func (c *RedisWorkerCoordinator) TryAcquireLease(ctx context.Context, pipelineID string, runNumber int64) (bool, error) {
	req, ok, err := c.beginAcquire(pipelineID, runNumber)
	if !ok {
		return false, err
	}
	defer c.endAcquire(pipelineID)
	opCtx, cancel := c.opContext(ctx, opAcquire)
	sent := c.clock.Now()
	res, err := c.backend.acquire(opCtx, req)
	if err == nil && res.Outcome == outcomeUnregistered {
		sent, res, err = c.acquireRegistered(opCtx, req)
	}
	if err == nil && res.Outcome == outcomeInterrupted {
		req, sent, res, err = c.acquireInterrupted(opCtx, req, res.RunNumber)
	}
	cancel()
	return c.settleAcquire(ctx, req, sent, res, err)
}

// beginAcquire checks a request and marks its pipeline busy; ok false
// means it is answered already (with err, or refused locally). After ok,
// endAcquire must follow.
func (c *RedisWorkerCoordinator) beginAcquire(pipelineID string, runNumber int64) (req leaseRequest, ok bool, err error) {
	if pipelineID == "" {
		return req, false, errors.New("distributed: TryAcquireLease: empty pipeline id")
	}
	kind := runtime.RunKindOf(runNumber)
	if kind == runtime.RunInvalid {
		return req, false, fmt.Errorf("%w: %d (want runtime.SlotRun, a counted run > 0, RunNumberAuto or RunNumberOnce)", ErrInvalidRunNumber, runNumber)
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return req, false, ErrClosed
	case !c.running:
		c.mu.Unlock()
		return req, false, ErrNotStarted
	case c.leases[pipelineID] != nil || c.busy[pipelineID]:
		// This worker holds the lease, or is asking for or giving back it:
		// either way not free, and asking Redis would only cost a round trip.
		c.mu.Unlock()
		c.stats.contended.Add(1)
		return req, false, nil
	}
	c.busy[pipelineID] = true
	c.inFlight.Add(1)
	req = leaseRequest{PipelineID: pipelineID, Owner: c.owner, Worker: c.workerID,
		Mode: runtime.RunValue(runNumber), Counted: kind == runtime.RunCounted}
	req.Rerun = req.slot() && c.rerun[pipelineID]
	// A grant must leave the worker's record alive for recordGiveUp from
	// where the lease's deadline counts. After a record write within the
	// last heartbeat interval the deadline counts from that write, and the
	// script need not refresh the record (one command less per grant);
	// otherwise the script refreshes it, and it counts from the send.
	// The script always reads the record (the grant needs it, and it
	// carries the state epoch), and refreshes it only when needed.
	req.RecordKey = c.recordKeyArg
	if now := c.clock.Now(); !c.recordOK.IsZero() && now.Sub(c.recordOK) < c.s.HeartbeatInterval {
		req.recordSent = c.recordOK
	} else {
		req.Refresh = true
	}
	c.mu.Unlock()
	return req, true, nil
}

// endAcquire ends what beginAcquire started.
func (c *RedisWorkerCoordinator) endAcquire(pipelineID string) {
	c.mu.Lock()
	delete(c.busy, pipelineID)
	c.mu.Unlock()
	c.inFlight.Done()
}

// acquireRegistered writes the worker record, found missing by an acquire
// (never written, or the server restarted empty), and asks once more.
func (c *RedisWorkerCoordinator) acquireRegistered(ctx context.Context, req leaseRequest) (time.Time, acquireResult, error) {
	if err := c.heartbeat(ctx); err != nil {
		return time.Time{}, acquireResult{}, err
	}
	req.RecordKey, req.Refresh, req.recordSent = c.recordKeyArg, true, time.Time{}
	sent := c.clock.Now()
	res, err := c.backend.acquire(ctx, req)
	if err == nil && res.Outcome == outcomeUnregistered {
		err = errors.New("distributed: the worker record vanished again right after it was written")
	}
	return sent, res, err
}

// acquireInterrupted asks, instead of req, for the earlier slot whose dead
// holder's lease req would have taken over, so that the slot it left
// unfinished runs again (ScheduledPipeline.RerunInterrupted). The grant is
// for that slot: CurrentLease reports it, and completing the lease records
// it; the pool then asks for req's slot again.
func (c *RedisWorkerCoordinator) acquireInterrupted(ctx context.Context, req leaseRequest, slot int64) (leaseRequest, time.Time, acquireResult, error) {
	req.Mode, req.Rerun = slot, false
	sent := c.clock.Now()
	res, err := c.backend.acquire(ctx, req)
	if err == nil && res.Outcome == outcomeInterrupted {
		err = fmt.Errorf("distributed: the acquire script named slot %d as interrupted twice", slot)
	}
	if err == nil && res.Outcome == outcomeAcquired {
		c.stats.reruns.Add(1)
		c.log.Info("distributed: re-running a slot whose holder died before completing it",
			"pipeline", req.PipelineID, "slot", time.Unix(slot, 0).UTC().Format(time.RFC3339), "run", slot)
	}
	return req, sent, res, err
}

// settleAcquire turns the backend's answer to req, sent at sent, into
// TryAcquireLease's result, recording a granted lease.
func (c *RedisWorkerCoordinator) settleAcquire(ctx context.Context, req leaseRequest, sent time.Time, res acquireResult, err error) (bool, error) {
	pipelineID, runNumber, owner := req.PipelineID, req.ruleMode(), req.Owner
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		what := fmt.Sprintf("acquire lease of %q", pipelineID)
		c.grantRefused(what, err)
		err = c.failure(what, err)
		if c.s.FallbackToLocal && !req.Ahead {
			return c.acquireLocal(req, err)
		}
		return false, err
	}
	c.noteOK()

	if res.Outcome == outcomeForeignData {
		return false, c.noteForeignData(pipelineID)
	}
	c.clearForeignData(pipelineID)
	switch res.Outcome {
	case outcomeSlotCompleted:
		c.stats.slotCompleted.Add(1)
		return false, runtime.ErrSlotCompleted
	case outcomeStateLost:
		c.stats.stateLost.Add(1)
		c.noteStateLost(pipelineID, runNumber)
		return false, fmt.Errorf("pipeline %q slot %d: %w", pipelineID, runNumber, ErrStateLost)
	case outcomeHeld:
		c.stats.contended.Add(1)
		return false, nil
	case outcomeAskAtSlot:
		return false, runtime.ErrAskAtSlot
	case outcomeFuture:
		c.noteFutureSlot(pipelineID, runNumber)
		return false, nil
	case outcomeBackingOff, outcomeFailStopped:
		c.stats.contended.Add(1)
		return false, c.failingError(ctx, req, res, sent)
	}

	h := &heldLease{
		lease: runtime.Lease{
			PipelineID:   pipelineID,
			WorkerID:     req.Worker,
			RunNumber:    res.RunNumber,
			Slot:         req.slot(),
			FencingToken: res.Token,
			AcquiredAt:   sent,
			ExpiresAt:    sent.Add(res.ValidFor),
		},
		mode:     runNumber,
		lastSent: sent,
		failures: res.Failures,
	}
	var recordSent time.Time
	if c.takesOver() {
		recordSent = req.recordSent
		if recordSent.IsZero() {
			recordSent = sent // the grant refreshed the record
		}
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
