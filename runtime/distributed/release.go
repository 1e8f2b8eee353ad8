package distributed

import (
	"context"
	"fmt"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// releaseAttempts bounds how often a release is tried when Redis does not
// answer; after that the lease simply expires after LeaseTTL.
const releaseAttempts = 3

// ReleaseLease gives up the lease held for pipelineID with a compare-and-
// delete on owner and token, so the next worker can take it at once. It
// ignores ctx's cancellation and deadline (a shutdown must not leave leases
// behind) and instead bounds each attempt by its own timeout, retrying
// transport failures a few times. When this worker does not hold the lease
// (never acquired, already lost) it changes nothing and returns an error
// wrapping ErrLeaseNotHeld.
func (c *RedisWorkerCoordinator) ReleaseLease(ctx context.Context, pipelineID string) error {
	return c.finish(ctx, pipelineID, false)
}

// CompleteLease is ReleaseLease after a successful run: in the same script
// it records the run's slot as completed (positive run numbers) or marks the
// Once run done for 2×LeaseTTL, so no replica runs it again. The slot is
// recorded even if the lease was lost meanwhile, since the run did complete.
func (c *RedisWorkerCoordinator) CompleteLease(ctx context.Context, pipelineID string) error {
	return c.finish(ctx, pipelineID, true)
}

func (c *RedisWorkerCoordinator) finish(ctx context.Context, pipelineID string, completed bool) error {
	return c.finishWith(ctx, pipelineID, completed, nil)
}

// finishWith is finish recording rec, when not nil, in the run history.
func (c *RedisWorkerCoordinator) finishWith(ctx context.Context, pipelineID string, completed bool, rec *history.Record) error {
	c.mu.Lock()
	h := c.leases[pipelineID]
	if h == nil {
		// A run whose lease was lost meanwhile (cancelled, typically) is
		// still recorded.
		var hist *historyEntry
		if c.running {
			hist = c.historyFor(nil, rec)
		}
		_ = c.failFor(rec) // not recorded: the lease may be another run's now
		c.mu.Unlock()
		if c.isClosed() {
			return ErrClosed
		}
		if hist != nil {
			c.writeHistory(context.WithoutCancel(ctx), pipelineID, hist)
		}
		return fmt.Errorf("%w: no lease of %q is held by this worker", ErrLeaseNotHeld, pipelineID)
	}
	delete(c.leases, pipelineID)
	owner := c.owner
	var hist *historyEntry
	var fail *failReq
	if !h.fallback {
		hist = c.historyFor(h, rec)
		fail = c.failFor(rec)
	}
	if h.fallback {
		if completed {
			c.local.complete(pipelineID, h.mode, c.clock.Now().Add(c.s.onceTTL))
		}
		c.mu.Unlock()
		c.countFinish(completed)
		return nil
	}
	// Until Redis has deleted it, the lease is still this worker's there: a
	// new acquire by this worker now would overwrite it and make the release
	// report a lease it no longer owns.
	c.busy[pipelineID] = true
	c.inFlight.Add(1)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.busy, pipelineID)
		c.mu.Unlock()
		c.inFlight.Done()
	}()
	return c.giveBackWith(context.WithoutCancel(ctx), h, owner, completed, hist, fail)
}

// giveBack deletes h in Redis (recording its slot when completed), retrying
// transport failures.
func (c *RedisWorkerCoordinator) giveBack(ctx context.Context, h *heldLease, owner string, completed bool) error {
	return c.giveBackWith(ctx, h, owner, completed, nil, nil)
}

// giveBackWith is giveBack recording hist, when not nil, in the run history,
// and fail, when not nil, in the fleet's failure state (failures.go).
func (c *RedisWorkerCoordinator) giveBackWith(ctx context.Context, h *heldLease, owner string, completed bool, hist *historyEntry, fail *failReq) error {
	ref := h.ref(owner)
	// The record goes with the first attempt when that is the single-node
	// pipeline; otherwise on its own once the lease is given back.
	histSent := false
	defer func() {
		if hist != nil && !histSent {
			c.writeHistory(ctx, ref.PipelineID, hist)
		}
	}()
	what := "release"
	if completed {
		what = "complete"
	}
	var lastErr error
	for attempt := 0; attempt < releaseAttempts; attempt++ {
		if attempt > 0 {
			// Real time on purpose: a short pause between attempts, not
			// something a test moves.
			time.Sleep(time.Duration(attempt) * 25 * time.Millisecond)
		}
		var owned bool
		var err error
		sent := c.clock.Now()
		if attempt == 0 && c.finisher != nil {
			// The first attempt joins whatever else is being given back.
			rep := c.finisher.do(finishReq{ref: ref, completed: completed, hist: hist, fail: fail})
			owned, err = rep.owned, rep.err
			histSent = err == nil
			if err == nil && fail != nil {
				c.noteFailure(ref.PipelineID, rep.fail, fail.err, sent)
			}
		} else if b, single := c.backend.(*singleBackend); single && fail != nil && !completed {
			opCtx, cancel := c.opContext(ctx, opRelease)
			var rep failRep
			owned, rep, err = b.fail(opCtx, ref, fail)
			cancel()
			if err == nil {
				c.noteFailure(ref.PipelineID, rep, fail.err, sent)
			}
		} else {
			if qb, ok := c.backend.(*quorumBackend); ok && attempt == 0 {
				// Redlock: the failure is recorded on the primary (giving
				// the reservation back) before the quorum lease is released,
				// so nobody is granted the lease before the backoff is in
				// place; a success's clear goes before its completion.
				c.quorumFailures(ctx, qb, ref, completed, fail, sent)
			}
			op := opRelease
			if completed {
				op = opComplete
			}
			opCtx, cancel := c.opContext(ctx, op)
			if completed {
				owned, err = c.backend.complete(opCtx, ref)
			} else {
				owned, err = c.backend.release(opCtx, ref)
			}
			cancel()
		}
		if err == nil {
			c.noteOK()
			if owned || lastErr != nil {
				// After a failed attempt, "not ours" most likely means that
				// attempt did delete it before its reply was lost.
				c.countFinish(completed)
				return nil
			}
			if completed {
				return fmt.Errorf("%w: lease of %q (token %d) had expired or changed hands; its slot is recorded as completed",
					ErrLeaseNotHeld, ref.PipelineID, ref.Token)
			}
			return fmt.Errorf("%w: lease of %q (token %d) had expired or changed hands", ErrLeaseNotHeld, ref.PipelineID, ref.Token)
		}
		lastErr = c.failure(fmt.Sprintf("%s lease of %q", what, ref.PipelineID), err)
	}
	if completed && c.retryCompletionLater(h, ref) {
		c.log.Warn("distributed: could not record a completed run yet; retrying in the background until the lease's renewal deadline",
			"pipeline", ref.PipelineID, "token", ref.Token, "error", lastErr)
		return lastErr
	}
	c.log.Warn("distributed: could not give a lease back; it expires on its own after the lease TTL",
		"pipeline", ref.PipelineID, "token", ref.Token, "error", lastErr)
	return lastErr
}

// completionRetryPause is the pause between background attempts to record
// a completed run.
const completionRetryPause = time.Second

// retryCompletionLater keeps trying, in the background, to record that
// ref's run completed, until the lease's renewal deadline passes or the
// worker stops. Until it is recorded, the slot (or the Once run, or the
// Every window) can be leased again once the lease expires, and run twice;
// a Redis back within the deadline, before anyone could take the lease,
// closes that door. It reports whether it started.
func (c *RedisWorkerCoordinator) retryCompletionLater(h *heldLease, ref leaseRef) bool {
	c.mu.Lock()
	if !c.running {
		c.mu.Unlock()
		return false
	}
	stop := c.loopStop
	c.inFlight.Add(1) // Stop closes stop first, then waits for this
	c.mu.Unlock()
	// Real time from here on: the deadline is a span of the worker's own
	// clock, and the pauses are not something a test moves.
	giveUp := time.Now().Add(h.deadline.Sub(c.clock.Now()))
	go func() {
		defer c.inFlight.Done()
		for tries := 1; time.Now().Before(giveUp); tries++ {
			select {
			case <-stop:
				return
			case <-time.After(min(completionRetryPause, time.Until(giveUp))):
			}
			ctx, cancel := c.opContext(context.Background(), opComplete)
			_, err := c.backend.complete(ctx, ref) // records the slot even if the lease is gone
			cancel()
			if err == nil {
				c.noteOK()
				c.countFinish(true)
				c.log.Info("distributed: completed run recorded after retrying",
					"pipeline", ref.PipelineID, "token", ref.Token, "retries", tries)
				return
			}
		}
		c.log.Warn("distributed: could not record a completed run before the lease's renewal deadline; its slot may run again elsewhere",
			"pipeline", ref.PipelineID, "token", ref.Token)
	}()
	return true
}

func (c *RedisWorkerCoordinator) countFinish(completed bool) {
	if completed {
		c.stats.completed.Add(1)
	} else {
		c.stats.released.Add(1)
	}
}
