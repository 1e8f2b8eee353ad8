package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// releaseOp deletes l's lease on one node (recording the completed slot
// when completed).
func (b *Backend) releaseOp(l Lease, completed bool) func(context.Context, *Node) (int64, error) {
	keys := b.nodeKeys.Get(l.PipelineID)
	flag := 0
	if completed {
		flag = 1
	}
	args := []any{nodeValue(l), l.Token, l.Mode, flag, b.stateTTL.Milliseconds(), b.s.OnceTTL.Milliseconds()}
	return func(ctx context.Context, node *Node) (int64, error) {
		return leasebackend.QuorumReleaseScript.Run(ctx, node.client, keys, args...).Int64()
	}
}

// Release gives l back on every quorum node; it reports whether a majority
// deleted it (see finish).
func (b *Backend) Release(ctx context.Context, l Lease) (bool, error) {
	return b.finish(ctx, l, false)
}

// Complete records l's run as completed, on the primary and on the nodes,
// and gives l back like Release.
func (b *Backend) Complete(ctx context.Context, l Lease) (bool, error) {
	return b.finish(ctx, l, true)
}

// finish gives l back on every quorum node at once; on completion the
// primary records the slot meanwhile (the authoritative record, while the
// nodes keep a copy). The lease counts as owned when a majority deleted it.
// It returns an error when the completion could not be recorded on the
// primary, or too few nodes answered to tell; the coordinator then tries
// again.
func (b *Backend) finish(ctx context.Context, l Lease, completed bool) (bool, error) {
	primaryErr := make(chan error, 1)
	if completed {
		go func() {
			primaryErr <- b.primary.Complete(ctx, l)
		}()
	} else {
		// The reservation may still be there after a short run; without it,
		// the next worker need not wait for it to expire. Off the critical
		// path: the lease is free once a majority deleted it, and a new
		// reservation by this worker is not touched (the release compares
		// the whole value).
		b.background(func() { b.releaseReservation(ctx, l) })
		primaryErr <- nil
	}
	n := len(b.nodes)
	got := fanOut(ctx, b, b.releaseOp(l, completed), func(got []nodeReply[int64]) bool {
		deleted, kept := tallyRelease(got)
		return deleted >= b.quorum || kept > n-b.quorum
	})
	deleted, kept := tallyRelease(got)

	var errs []error
	if err := <-primaryErr; err != nil {
		errs = append(errs, fmt.Errorf("primary %s: %w", b.s.Primary, err))
	}
	owned := deleted >= b.quorum
	if !owned && kept <= n-b.quorum {
		errs = append(errs, fmt.Errorf("%w: %d of %d nodes answered the release of %q, %d needed: %s",
			ErrNotReached, deleted+kept, n, l.PipelineID, b.quorum, nodeErrors(b, got)))
	}
	return owned, errors.Join(errs...)
}

// tallyRelease counts the nodes that deleted the lease and those that
// answered it was not theirs.
func tallyRelease(got []nodeReply[int64]) (deleted, kept int) {
	for _, r := range got {
		switch {
		case r.err != nil:
		case r.val == 1:
			deleted++
		default:
			kept++
		}
	}
	return deleted, kept
}

// releaseReservation gives l's reservation back on the primary, once: it
// expires within moments anyway.
func (b *Backend) releaseReservation(ctx context.Context, l Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.s.OpTimeout)
	defer cancel()
	_ = b.primary.ReleaseReservation(ctx, l)
}

// backgroundWork tracks work that outlives the call that started it, so
// close can wait for it before the connections go.
type backgroundWork struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	closed bool
}

// background runs f on its own goroutine, unless the backend is closed.
func (b *Backend) background(f func()) {
	b.bg.mu.Lock()
	if b.bg.closed {
		b.bg.mu.Unlock()
		return
	}
	b.bg.wg.Add(1)
	b.bg.mu.Unlock()
	go func() {
		defer b.bg.wg.Done()
		f()
	}()
}

// waitBackground refuses new background work and waits for the running.
func (b *Backend) waitBackground() {
	b.bg.mu.Lock()
	b.bg.closed = true
	b.bg.mu.Unlock()
	b.bg.wg.Wait()
}
