package quorum

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// Validate reports whether a majority of quorum nodes hold exactly token as
// pipelineID's lease. It answers as soon as that is decided either way, and
// fails when too few nodes answer to tell.
func (b *Backend) Validate(ctx context.Context, pipelineID string, token int64) (bool, error) {
	key := b.keys.Lease(pipelineID)
	n := len(b.nodes)
	count := func(got []nodeReply[int64]) (match, other int) {
		for _, r := range got {
			switch {
			case r.err != nil:
			case r.val == token:
				match++
			default:
				other++
			}
		}
		return match, other
	}
	got := fanOut(ctx, b, func(ctx context.Context, node *Node) (int64, error) {
		v, err := node.client.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		held, err := leasebackend.LeaseToken(v)
		if err != nil {
			return 0, fmt.Errorf("distributed: lease of %q holds a malformed value", pipelineID)
		}
		return held, nil
	}, func(got []nodeReply[int64]) bool {
		match, other := count(got)
		return match >= b.quorum || other > n-b.quorum
	})
	match, other := count(got)
	switch {
	case match >= b.quorum:
		return true, nil
	case other > n-b.quorum:
		return false, nil
	}
	return false, fmt.Errorf("%w: %d of %d nodes answered whether token %d holds the lease of %q, %d needed: %s",
		ErrNotReached, match+other, n, token, pipelineID, b.quorum, nodeErrors(b, got))
}

// Ping checks that leases can be granted: the primary answers (it mints
// every token) and so does a majority of quorum nodes.
func (b *Backend) Ping(ctx context.Context) error {
	primaryErr := make(chan error, 1)
	go func() { primaryErr <- b.primary.Ping(ctx) }()
	got := fanOut(ctx, b, func(ctx context.Context, node *Node) (struct{}, error) {
		return struct{}{}, node.client.Ping(ctx).Err()
	}, nil)
	return b.enough("answer", got, <-primaryErr)
}

// Prepare loads the scripts on the primary and on every quorum node.
func (b *Backend) Prepare(ctx context.Context) error {
	primaryErr := make(chan error, 1)
	go func() { primaryErr <- b.primary.Prepare(ctx) }()
	got := fanOut(ctx, b, func(ctx context.Context, node *Node) (struct{}, error) {
		return struct{}{}, leasebackend.LoadScripts(ctx, node.client, leasebackend.QuorumScripts)
	}, nil)
	return b.enough("are ready", got, <-primaryErr)
}

// enough turns the primary's error and the nodes' replies into one error:
// nil when the primary worked and a majority of nodes did.
func (b *Backend) enough(what string, got []nodeReply[struct{}], primaryErr error) error {
	var errs []error
	if primaryErr != nil {
		errs = append(errs, fmt.Errorf("primary %s: %w", b.s.Primary, primaryErr))
	}
	ok := 0
	for _, r := range got {
		if r.err == nil {
			ok++
		}
	}
	if ok < b.quorum {
		errs = append(errs, fmt.Errorf("%w: %d of %d nodes %s, %d needed: %s",
			ErrNotReached, ok, len(b.nodes), what, b.quorum, nodeErrors(b, got)))
	}
	return errors.Join(errs...)
}
