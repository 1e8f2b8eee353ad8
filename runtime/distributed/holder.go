package distributed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

var _ runtime.LeaseHolderReporter = (*RedisWorkerCoordinator)(nil)

// storedLease is a lease as read back from Redis, whoever holds it.
type storedLease struct {
	token, run int64
	owner      string
	ttl        time.Duration // left to live in Redis
	// recordTTL is what the holder's worker record has left to live when
	// a contender can take the lease over once it is gone (takeover.go):
	// 0 when it is gone already, -1 when that does not apply (no takeover,
	// or a record without expiry).
	recordTTL time.Duration
}

// LeaseHolder reports the lease in force for pipelineID, whichever worker
// holds it (runtime.LeaseHolderReporter): the holder's worker id, run
// number, fencing token and, by this coordinator's clock, when the lease
// stops keeping others out unless renewed: its expiry, or the expiry of the
// holder's worker record when that is sooner and takeover applies (one
// Redis server, not a Cluster or a Redlock quorum; see takeover.go). A dead
// holder's runs are taken over then. It is read-only, and a failure to ask
// does not mark Redis unhealthy.
func (c *RedisWorkerCoordinator) LeaseHolder(ctx context.Context, pipelineID string) (runtime.Lease, bool, error) {
	if c.isClosed() {
		return runtime.Lease{}, false, ErrClosed
	}
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	now := c.clock.Now()
	l, ok, err := c.backend.holder(ctx, pipelineID)
	if err != nil {
		return runtime.Lease{}, false, fmt.Errorf("distributed: read the lease of %q: %w", pipelineID, c.s.redactor.Wrap(err))
	}
	if !ok {
		return runtime.Lease{}, false, nil
	}
	wait := l.ttl
	if l.recordTTL >= 0 && l.recordTTL < wait {
		wait = l.recordTTL
	}
	return runtime.Lease{
		PipelineID:   pipelineID,
		WorkerID:     ownerWorker(l.owner),
		RunNumber:    l.run,
		FencingToken: l.token,
		ExpiresAt:    now.Add(wait),
	}, true, nil
}

// ownerWorker is the worker id in an owner, "<worker id>#<suffix>".
func ownerWorker(owner string) string {
	if i := strings.LastIndexByte(owner, '#'); i >= 0 {
		return owner[:i]
	}
	return owner
}

// parseStored reads "<token> <run> <owner>", a lease on the primary.
func parseStored(v string) (storedLease, error) {
	const n = 3
	f := strings.SplitN(v, " ", n)
	if len(f) != n {
		return storedLease{}, fmt.Errorf("malformed lease value")
	}
	token, err1 := strconv.ParseInt(f[0], 10, 64)
	run, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return storedLease{}, fmt.Errorf("malformed lease value")
	}
	return storedLease{token: token, run: run, owner: f[n-1], recordTTL: -1}, nil
}

// holder reads the primary's lease and its time to live in one round trip.
func (b *singleBackend) holder(ctx context.Context, pipelineID string) (storedLease, bool, error) {
	key := b.pipelineKeys(pipelineID)[0]
	var value *redis.StringCmd
	var ttl *redis.DurationCmd
	_, err := b.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		value = p.LIndex(ctx, key, 0)
		ttl = p.PTTL(ctx, key)
		return nil
	})
	if errors.Is(value.Err(), redis.Nil) {
		return storedLease{}, false, nil
	}
	if err != nil {
		return storedLease{}, false, err
	}
	l, err := parseStored(value.Val())
	if err != nil {
		return storedLease{}, false, err
	}
	l.ttl = max(ttl.Val(), 0)
	l.recordTTL = -1
	if b.registry != "" {
		// A second round trip: the record's key is in the lease's value.
		rec, err := b.client.PTTL(ctx, b.registry+ownerWorker(l.owner)).Result()
		switch {
		case err != nil:
			return storedLease{}, false, err
		case rec == -2: // go-redis passes PTTL's -2 (no such key) on as is
			l.recordTTL = 0 // gone: the next contender takes over
		case rec >= 0:
			l.recordTTL = rec
		}
	}
	return l, true, nil
}
