package distributed

import (
	"context"
	"fmt"
	"time"
)

// RenewLease extends the lease held for pipelineID now, in one round trip.
// The coordinator already renews held leases in the background; this is for
// callers that want to extend before a long step. If Redis says the lease is
// gone or has changed hands, the lease is lost: removed locally, the
// lost-lease callback runs, and the error wraps ErrLeaseNotHeld.
func (c *RedisWorkerCoordinator) RenewLease(ctx context.Context, pipelineID string) error {
	c.mu.Lock()
	h := c.leases[pipelineID]
	owner := c.owner
	if h == nil {
		c.mu.Unlock()
		return fmt.Errorf("%w: no lease of %q is held by this worker", ErrLeaseNotHeld, pipelineID)
	}
	if h.fallback {
		h.lease.ExpiresAt = c.clock.Now().Add(c.s.LeaseTTL)
		c.mu.Unlock()
		return nil
	}
	ref := h.ref(owner)
	c.mu.Unlock()

	opCtx, cancel := c.opContext(ctx, opRenew)
	results, sent, recordSent := c.renewRound(opCtx, []leaseRef{ref})
	res := results[0]
	cancel()
	lost, failed := c.applyRenewals([]*heldLease{h}, results, sent, recordSent)
	c.notifyLost(lost, "gone or held by another worker")
	switch {
	case len(lost) > 0:
		return fmt.Errorf("%w: lease of %q (token %d) had expired or changed hands", ErrLeaseNotHeld, pipelineID, ref.Token)
	case failed:
		what := fmt.Sprintf("renew lease of %q", pipelineID)
		c.grantRefused(what, res.Err)
		return c.failure(what, res.Err)
	}
	return nil
}

// renewLoop renews every held lease in one round trip each renewEvery (more
// often after a failure) and gives leases up locally at their deadline.
func (c *RedisWorkerCoordinator) renewLoop(stop <-chan struct{}) {
	defer c.loops.Done()
	timer := c.clock.NewTimer(c.s.renewEvery)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-timer.C():
		}
		ok, earliest := c.renewAll()
		c.renewBackfills()
		next := c.s.renewEvery
		if !ok {
			next = c.s.retryDelay
		}
		if !earliest.IsZero() {
			next = max(min(next, earliest.Sub(c.clock.Now())), time.Millisecond)
		}
		timer.Reset(next)
	}
}

// renewAll runs one renewal round and reports whether it went through
// (false after a transport failure) and the earliest renewal deadline of
// the leases still held after it (zero when none).
func (c *RedisWorkerCoordinator) renewAll() (ok bool, earliest time.Time) {
	lost, _ := c.expireOverdue(c.clock.Now())
	c.notifyLost(lost, "renewal deadline passed")

	c.mu.Lock()
	owner := c.owner
	var held []*heldLease
	var refs []leaseRef
	for _, h := range c.leases {
		if h.fallback {
			continue
		}
		held = append(held, h)
		refs = append(refs, h.ref(owner))
		if earliest.IsZero() || h.deadline.Before(earliest) {
			earliest = h.deadline
		}
	}
	c.mu.Unlock()
	if len(refs) == 0 {
		return true, time.Time{}
	}

	// A stalled Redis must not hold the round past the first deadline.
	timeout := max(min(c.s.renewEvery, earliest.Sub(c.clock.Now())), time.Millisecond)
	ctx, cancel := context.WithTimeout(withOp(context.Background(), opRenew), timeout)
	results, sent, recordSent := c.renewRound(ctx, refs)
	cancel()

	lost, failed := c.applyRenewals(held, results, sent, recordSent)
	if failed {
		c.stats.renewalFailures.Add(1)
		for _, r := range results {
			if r.Err != nil {
				c.grantRefused("renewal", r.Err)
				_ = c.failure("renew leases", r.Err)
				break
			}
		}
	}
	c.notifyLost(lost, "gone or held by another worker")
	lost, earliest = c.expireOverdue(c.clock.Now())
	c.notifyLost(lost, "renewal deadline passed")
	return !failed, earliest
}

// renewRound renews refs, first refreshing the worker record when takeover
// is on: a lease renewed right after its holder's record was refreshed
// cannot have been taken over before the refresh, so the record rule's
// deadline counts from the refresh's send (recordSent; zero when the
// refresh failed or takeover is off). sent is when the renewals were sent.
//
// Both go in one pipelined round trip, the refresh first: Redis runs a
// connection's commands in order.
func (c *RedisWorkerCoordinator) renewRound(ctx context.Context, refs []leaseRef) (results []renewResult, sent, recordSent time.Time) {
	sent = c.clock.Now()
	b, ok := c.backend.(*singleBackend)
	call, running := c.recordCall()
	if !ok || b.registry == "" || !running {
		return c.backend.renew(ctx, refs), sent, time.Time{}
	}
	results, err := b.renewAfter(ctx, &call, refs)
	if err != nil {
		c.grantRefused("heartbeat", err)
		_ = c.failure("heartbeat", err)
		return results, sent, time.Time{}
	}
	c.noteRecord(sent)
	return results, sent, sent
}

// applyRenewals records the results of a renewal round sent at sent and
// removes the leases Redis no longer holds for this worker, returning them.
// Leases released or replaced meanwhile are left alone.
func (c *RedisWorkerCoordinator) applyRenewals(held []*heldLease, results []renewResult, sent, recordSent time.Time) (lost []*heldLease, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, h := range held {
		r := results[i]
		if r.Err != nil {
			failed = true
			continue
		}
		if c.leases[h.lease.PipelineID] != h {
			continue
		}
		if !r.Held {
			delete(c.leases, h.lease.PipelineID)
			lost = append(lost, h)
			continue
		}
		h.lastSent = sent
		h.lease.ExpiresAt = sent.Add(r.ValidFor)
		h.setDeadline(c.s, sent, r.ValidFor, recordSent)
	}
	if !failed && len(results) > 0 {
		c.noteOK()
	}
	return lost, failed
}

// expireOverdue removes and returns the leases whose renewal deadline has
// passed at now, and returns the earliest deadline of those left (zero when
// none).
func (c *RedisWorkerCoordinator) expireOverdue(now time.Time) (lost []*heldLease, earliest time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, h := range c.leases {
		switch {
		case h.fallback:
		case !now.Before(h.deadline):
			delete(c.leases, id)
			lost = append(lost, h)
		case earliest.IsZero() || h.deadline.Before(earliest):
			earliest = h.deadline
		}
	}
	return lost, earliest
}
