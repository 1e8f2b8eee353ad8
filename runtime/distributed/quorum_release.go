package distributed

import (
	"context"
	"errors"
	"fmt"
)

// releaseOp deletes ref's lease on one node (recording the completed slot
// when completed).
func (b *quorumBackend) releaseOp(ref leaseRef, completed bool) func(context.Context, *quorumNode) (int64, error) {
	keys := b.keys.releaseKeys(ref.PipelineID)
	flag := 0
	if completed {
		flag = 1
	}
	args := []any{ref.Owner, ref.Token, ref.Mode, flag, b.stateTTL.Milliseconds(), b.s.onceTTL.Milliseconds()}
	return func(ctx context.Context, node *quorumNode) (int64, error) {
		return quorumReleaseScript.Run(ctx, node.client, keys, args...).Int64()
	}
}

func (b *quorumBackend) release(ctx context.Context, ref leaseRef) (bool, error) {
	return b.finish(ctx, ref, false)
}

func (b *quorumBackend) complete(ctx context.Context, ref leaseRef) (bool, error) {
	return b.finish(ctx, ref, true)
}

// finish gives ref back on every quorum node and on the primary at once. On
// completion the primary records the slot (the authoritative record) and the
// nodes keep a copy. The lease counts as owned when a majority deleted it.
// It returns an error when the primary failed (the reservation would block
// other workers until it expires, and a completion must be recorded) or too
// few nodes answered to tell; the coordinator then tries again.
func (b *quorumBackend) finish(ctx context.Context, ref leaseRef, completed bool) (bool, error) {
	primaryErr := make(chan error, 1)
	go func() {
		var err error
		if completed {
			_, err = b.primary.complete(ctx, ref)
		} else {
			_, err = b.primary.release(ctx, ref)
		}
		primaryErr <- err
	}()
	n := len(b.nodes)
	got := fanOut(ctx, b, b.releaseOp(ref, completed), func(got []nodeReply[int64]) bool {
		deleted, kept := tallyRelease(got)
		return deleted >= b.quorum || kept > n-b.quorum
	})
	deleted, kept := tallyRelease(got)

	var errs []error
	if err := <-primaryErr; err != nil {
		errs = append(errs, fmt.Errorf("primary %s: %w", b.s.primary.redacted, err))
	}
	owned := deleted >= b.quorum
	if !owned && kept <= n-b.quorum {
		errs = append(errs, fmt.Errorf("%w: %d of %d nodes answered the release of %q, %d needed: %s",
			ErrQuorumNotReached, deleted+kept, n, ref.PipelineID, b.quorum, nodeErrors(b, got)))
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
