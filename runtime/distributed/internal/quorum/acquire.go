package quorum

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// ErrNotReached is wrapped by the errors of Redlock mode when too few
// quorum nodes answered, or a majority answered only after the lease's
// validity window had passed: nothing can be said about the lease, so no
// run starts (fail-safe). runtime/distributed exports it as
// ErrQuorumNotReached.
var ErrNotReached = errors.New("distributed: Redlock quorum not reached")

// Outcome says what the nodes answered an acquire.
type Outcome int

const (
	// Granted: a majority set the lease within its validity window.
	Granted Outcome = iota
	// Held: another worker's lease (or a newer token) stood in the way.
	Held
	// Completed: the slot already ran.
	Completed
)

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

// Acquire sets l, whose token the primary just reserved, on every quorum
// node at once. It holds only when a majority accepted and the time spent,
// counted on the monotonic clock from start (taken before the primary was
// asked), is still inside the validity window:
//
//	LeaseTTL − elapsed − (LeaseTTL × RedlockClockDriftFactor + 2 ms) > 0
//
// Otherwise the lease is released everywhere, nodes that did not answer
// included, and so is the reservation, so the next worker need not wait.
// With Held, the token is the largest a refusing node named.
func (b *Backend) Acquire(ctx context.Context, start time.Time, l Lease) (Outcome, int64, error) {
	keys := b.nodeKeys.Get(l.PipelineID)
	args := []any{nodeValue(l), l.Token, l.Mode, b.s.LeaseTTL.Milliseconds(), l.Owner}
	n := len(b.nodes)
	got, rest := fanOutRest(ctx, b, func(ctx context.Context, node *Node) ([]int64, error) {
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
		return Granted, 0, nil
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
	b.abandon(ctx, l)
	switch {
	case t.completed > 0:
		// Only a completion writes a node's slot copy: the slot did run.
		return Completed, 0, nil
	case t.granted >= b.quorum:
		return 0, 0, fmt.Errorf("%w: a majority (%d of %d nodes) accepted the lease of %q only after %s, past its validity of %s",
			ErrNotReached, t.granted, n, l.PipelineID, elapsed.Round(time.Millisecond), b.validity)
	case t.held+t.stale > 0 && t.granted+t.held+t.stale >= b.quorum:
		// Enough nodes answered for a majority to be possible, and it was
		// another worker's lease (or a newer token) that stood in the way.
		return Held, t.holder, nil
	default:
		return 0, 0, fmt.Errorf("%w: %d of %d nodes accepted the lease of %q, %d needed: %s",
			ErrNotReached, t.granted, n, l.PipelineID, b.quorum, nodeErrors(b, got))
	}
}

// abandon releases a lease that did not reach a quorum in time: on every
// node, since a node that did not answer may still have applied the request,
// and on the primary, so the next worker need not wait out the reservation.
func (b *Backend) abandon(ctx context.Context, l Lease) {
	ctx = context.WithoutCancel(ctx)
	primaryDone := make(chan struct{})
	go func() {
		defer close(primaryDone)
		pctx, cancel := context.WithTimeout(ctx, b.s.OpTimeout)
		defer cancel()
		_ = b.primary.ReleaseReservation(pctx, l)
	}()
	// A release that failed fast (a connection broken by a restart, say) is
	// tried once more: what stays behind blocks the pipeline on that node
	// until it expires. A node that timed out is not asked again: it would
	// only time out again. Deleting twice is harmless.
	var again []*Node
	for _, r := range fanOut(ctx, b, b.releaseOp(l, false), nil) {
		if r.err != nil && !isTimeout(r.err) {
			again = append(again, r.node)
		}
	}
	if len(again) > 0 {
		fanOutTo(ctx, b, again, b.releaseOp(l, false), nil)
	}
	<-primaryDone
}

// isTimeout reports whether err is a request running out of time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
