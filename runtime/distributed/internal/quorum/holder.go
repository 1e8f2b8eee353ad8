package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stored is a lease as read back from the nodes, whoever holds it.
type Stored struct {
	Token, Run int64
	Owner      string
	TTL        time.Duration // left to live on the quorum
}

// Holder reads the lease from every quorum node: the lease in force is the
// value a majority holds, and it lapses when fewer than a majority still
// do, so its expiry is the quorum-th longest time to live among them.
func (b *Backend) Holder(ctx context.Context, pipelineID string) (Stored, bool, error) {
	key := b.keys.Lease(pipelineID)
	type read struct {
		value string
		ttl   time.Duration
	}
	got := fanOut(ctx, b, func(ctx context.Context, node *Node) (read, error) {
		var value *redis.StringCmd
		var ttl *redis.DurationCmd
		_, err := node.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			value = p.Get(ctx, key)
			ttl = p.PTTL(ctx, key)
			return nil
		})
		if errors.Is(value.Err(), redis.Nil) {
			return read{}, nil
		}
		if err != nil {
			return read{}, err
		}
		return read{value.Val(), max(ttl.Val(), 0)}, nil
	}, nil)
	ttls := map[string][]time.Duration{}
	answered := 0
	for _, r := range got {
		if r.err != nil {
			continue
		}
		answered++
		if r.val.value != "" {
			ttls[r.val.value] = append(ttls[r.val.value], r.val.ttl)
		}
	}
	for value, held := range ttls {
		if len(held) < b.quorum {
			continue
		}
		l, err := parseNodeValue(value)
		if err != nil {
			return Stored{}, false, err
		}
		slices.Sort(held)
		l.TTL = held[len(held)-b.quorum]
		return l, true, nil
	}
	if answered < b.quorum {
		return Stored{}, false, fmt.Errorf("%w: %d of %d nodes answered, %d needed: %s", ErrNotReached, answered, len(b.nodes), b.quorum, nodeErrors(b, got))
	}
	return Stored{}, false, nil
}

// parseNodeValue reads "<token> <run> <mode> <owner>" (nodeValue).
func parseNodeValue(v string) (Stored, error) {
	f := strings.SplitN(v, " ", 4)
	if len(f) != 4 {
		return Stored{}, fmt.Errorf("malformed lease value")
	}
	token, err1 := strconv.ParseInt(f[0], 10, 64)
	run, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return Stored{}, fmt.Errorf("malformed lease value")
	}
	return Stored{Token: token, Run: run, Owner: f[3]}, nil
}
