package distributed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// ErrQuorumNotReached is wrapped by the errors of Redlock mode when too few
// quorum nodes answered, or a majority answered only after the lease's
// validity window had passed: nothing can be said about the lease, so no
// run starts (fail-safe).
var ErrQuorumNotReached = errors.New("distributed: Redlock quorum not reached")

// acquireTally counts the quorum nodes' answers to an acquire.
type acquireTally struct {
	granted, held, completed, stale, failed int
	holder                                  int64 // largest token a refusing node named
}

func tallyAcquire(got []nodeReply[[]int64]) acquireTally {
	var t acquireTally
	for _, r := range got {
		if r.err != nil || len(r.val) == 0 {
			t.failed++
			continue
		}
		switch r.val[0] {
		case 1:
			t.granted++
		case 0:
			t.held++
		case -1:
			t.completed++
		case -2:
			t.stale++
		default:
			t.failed++
			continue
		}
		if len(r.val) > 1 {
			t.holder = max(t.holder, r.val[1])
		}
	}
	return t
}

// acquire reserves the fencing token on the primary, then sets the lease on
// every quorum node at once. It holds only when a majority accepted and the
// time spent, counted on the monotonic clock from before the primary was
// asked, is still inside the validity window:
//
//	LeaseTTL − elapsed − (LeaseTTL × RedlockClockDriftFactor + 2 ms) > 0
//
// Otherwise the lease is released everywhere, nodes that did not answer
// included, and so is the reservation, so the next worker need not wait.
func (b *quorumBackend) acquire(ctx context.Context, req leaseRequest) (acquireResult, error) {
	start := time.Now()
	res, err := b.reserver.acquire(ctx, req)
	if err != nil {
		// Fail closed: without the primary there is no token, so no lease,
		// however healthy the quorum.
		return acquireResult{}, fmt.Errorf("primary %s: %w", b.s.primary.Redacted, err)
	}
	if res.Outcome != outcomeAcquired {
		return res, nil
	}
	ref := leaseRef{PipelineID: req.PipelineID, Owner: req.Owner, Token: res.Token, RunNumber: res.RunNumber, Mode: req.Mode}
	keys := b.nodeKeys.Get(req.PipelineID)
	args := []any{nodeValue(ref), res.Token, req.Mode, b.s.LeaseTTL.Milliseconds(), req.Owner}
	n := len(b.nodes)
	got, rest := fanOutRest(ctx, b, func(ctx context.Context, node *quorumNode) ([]int64, error) {
		return leasebackend.QuorumAcquireScript.Run(ctx, node.client, keys, args...).Int64Slice()
	}, func(got []nodeReply[[]int64]) bool {
		// Stop early on success, or when refusals alone rule a majority
		// out; after a transport failure wait for every node, so the
		// outcome tells contention from an unreachable quorum.
		t := tallyAcquire(got)
		return t.granted >= b.quorum || t.completed > 0 || t.held+t.stale+t.completed > n-b.quorum
	})
	elapsed := time.Since(start)
	t := tallyAcquire(got)
	if t.granted >= b.quorum && elapsed < b.validity {
		res.ValidFor = b.validity
		return res, nil
	}

	b.failedAcquisitions.Add(1)
	if t.granted >= b.quorum {
		b.lateAcquisitions.Add(1)
	}
	// Only once every request ended: a release overtaking a request still on
	// its way would leave the lease behind on that node. The late answers
	// complete the picture (they cannot make a majority: the early decision
	// ruled it out).
	got = append(got, rest()...)
	t = tallyAcquire(got)
	b.abandon(ctx, ref)
	switch {
	case t.completed > 0:
		// Only a completion writes a node's slot copy: the slot did run.
		return acquireResult{Outcome: outcomeSlotCompleted}, nil
	case t.granted >= b.quorum:
		return acquireResult{}, fmt.Errorf("%w: a majority (%d of %d nodes) accepted the lease of %q only after %s, past its validity of %s",
			ErrQuorumNotReached, t.granted, n, req.PipelineID, elapsed.Round(time.Millisecond), b.validity)
	case t.held+t.stale > 0 && t.granted+t.held+t.stale >= b.quorum:
		// Enough nodes answered for a majority to be possible, and it was
		// another worker's lease (or a newer token) that stood in the way.
		return acquireResult{Outcome: outcomeHeld, Token: t.holder}, nil
	default:
		return acquireResult{}, fmt.Errorf("%w: %d of %d nodes accepted the lease of %q, %d needed: %s",
			ErrQuorumNotReached, t.granted, n, req.PipelineID, b.quorum, nodeErrors(b, got))
	}
}

// abandon releases a lease that did not reach a quorum in time: on every
// node, since a node that did not answer may still have applied the request,
// and on the primary, so the next worker need not wait out the reservation.
func (b *quorumBackend) abandon(ctx context.Context, ref leaseRef) {
	ctx = context.WithoutCancel(ctx)
	primaryDone := make(chan struct{})
	go func() {
		defer close(primaryDone)
		pctx, cancel := context.WithTimeout(ctx, b.s.opTimeout)
		defer cancel()
		_, _ = b.reserver.release(pctx, ref)
	}()
	// A release that failed fast (a connection broken by a restart, say) is
	// tried once more: what stays behind blocks the pipeline on that node
	// until it expires. A node that timed out is not asked again: it would
	// only time out again. Deleting twice is harmless.
	var again []*quorumNode
	for _, r := range fanOut(ctx, b, b.releaseOp(ref, false), nil) {
		if r.err != nil && !isTimeout(r.err) {
			again = append(again, r.node)
		}
	}
	if len(again) > 0 {
		fanOutTo(ctx, b, again, b.releaseOp(ref, false), nil)
	}
	<-primaryDone
}

// isTimeout reports whether err is a request running out of time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
