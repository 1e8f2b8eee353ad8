package distributed

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
	"github.com/agora-etl/agora/runtime/distributed/internal/quorum"
)

// Redlock quorum leases: with RedlockRedisURLs set, a lease lives on a
// majority of independent Redis masters while the primary keeps the worker
// registry, the fencing counter, the completed slots and Once markers. The
// quorum itself is internal/quorum (its doc.go tells how it holds); this
// file joins it to the coordinator: its settings from the coordinator's,
// the primary's part through quorumPrimary, the coordinator's lease types
// to and from its own.

// ErrQuorumNotReached is wrapped by the errors of Redlock mode when too few
// quorum nodes answered, or a majority answered only after the lease's
// validity window had passed: nothing can be said about the lease, so no
// run starts (fail-safe).
var ErrQuorumNotReached = quorum.ErrNotReached

// ErrQuorumNotIndependent is wrapped by the error Start returns, and by the
// connection errors of a quorum node, when RedlockRedisURLs does not name
// independent Redis masters: two URLs reach the same redis-server (the same
// INFO run_id, e.g. a host name and its IP address, or a TCP port and a unix
// socket), or a URL reaches a replica, a Redis Cluster node or a Sentinel.
// Counting one server twice would let a minority of real servers make a
// "majority".
var ErrQuorumNotIndependent = quorum.ErrNotIndependent

// quorumBackend is the leaseBackend of Redlock mode.
type quorumBackend struct {
	redlock *quorum.Backend
	primary quorumPrimary
	s       settings
	// reservation is how long the primary's reservation lasts: the lease
	// TTL of primary.reserver.
	reservation time.Duration
}

func newQuorumBackend(primary redis.UniversalClient, s settings) (leaseBackend, error) {
	if len(s.quorum) < minRedlockNodes {
		return nil, fmt.Errorf("%w: RedlockRedisURLs names %d server(s); quorum mode needs at least %d", ErrInvalidConfig, len(s.quorum), minRedlockNodes)
	}
	nodeTimeout := quorum.NodeTimeout(s.LeaseTTL)
	validity := quorum.Validity(s.LeaseTTL, s.RedlockClockDriftFactor)
	if validity <= nodeTimeout {
		return nil, fmt.Errorf("%w: LeaseTTL %s with RedlockClockDriftFactor %v leaves a lease valid for %s, not more than one quorum request may take (%s); raise LeaseTTL or lower the drift factor",
			ErrInvalidConfig, s.LeaseTTL, s.RedlockClockDriftFactor, validity, nodeTimeout)
	}
	b := &quorumBackend{s: s, reservation: min(2*nodeTimeout, s.LeaseTTL)}
	b.primary = newQuorumPrimary(primary, s, b.reservation)
	b.redlock = quorum.New(quorum.Settings{
		Nodes:            s.quorum,
		Primary:          s.primary.Redacted,
		KeyPrefix:        s.KeyPrefix,
		LeaseTTL:         s.LeaseTTL,
		ClockDriftFactor: s.RedlockClockDriftFactor,
		OnceTTL:          s.onceTTL,
		OpTimeout:        s.opTimeout,
		Redactor:         s.redactor,
		Logger:           s.Logger,
		StartContext:     func(ctx context.Context) context.Context { return withOp(ctx, opConnect) },
	}, b.primary)
	return b, nil
}

// quorumLease is ref as the quorum backend knows it.
func quorumLease(ref leaseRef) quorum.Lease {
	return quorum.Lease{PipelineID: ref.PipelineID, Owner: ref.Owner, Token: ref.Token, RunNumber: ref.RunNumber, Mode: ref.Mode}
}

// acquire reserves the fencing token on the primary, then sets the lease on
// every quorum node at once (quorum.Backend.Acquire). The time spent is
// counted from before the primary was asked.
func (b *quorumBackend) acquire(ctx context.Context, req leaseRequest) (acquireResult, error) {
	start := time.Now()
	res, err := b.primary.reserver.acquire(ctx, req)
	if err != nil {
		// Fail closed: without the primary there is no token, so no lease,
		// however healthy the quorum.
		return acquireResult{}, fmt.Errorf("primary %s: %w", b.s.primary.Redacted, err)
	}
	if res.Outcome != outcomeAcquired {
		return res, nil
	}
	ref := leaseRef{PipelineID: req.PipelineID, Owner: req.Owner, Token: res.Token, RunNumber: res.RunNumber, Mode: req.ruleMode()}
	outcome, holder, err := b.redlock.Acquire(ctx, start, quorumLease(ref))
	if err != nil {
		return acquireResult{}, err
	}
	switch outcome {
	case quorum.Granted:
		res.ValidFor = b.redlock.Validity()
		return res, nil
	case quorum.Completed:
		return acquireResult{Outcome: outcomeSlotCompleted}, nil
	default:
		return acquireResult{Outcome: outcomeHeld, Token: holder}, nil
	}
}

func (b *quorumBackend) renew(ctx context.Context, refs []leaseRef) []renewResult {
	ls := make([]quorum.Lease, len(refs))
	for i, ref := range refs {
		ls[i] = quorumLease(ref)
	}
	got := b.redlock.Renew(ctx, ls)
	out := make([]renewResult, len(got))
	for i, r := range got {
		out[i] = renewResult{Held: r.Held, ValidFor: r.ValidFor, Err: r.Err}
	}
	return out
}

func (b *quorumBackend) release(ctx context.Context, ref leaseRef) (bool, error) {
	return b.redlock.Release(ctx, quorumLease(ref))
}

func (b *quorumBackend) complete(ctx context.Context, ref leaseRef) (bool, error) {
	return b.redlock.Complete(ctx, quorumLease(ref))
}

func (b *quorumBackend) validate(ctx context.Context, pipelineID string, token int64) (bool, error) {
	return b.redlock.Validate(ctx, pipelineID, token)
}

func (b *quorumBackend) holder(ctx context.Context, pipelineID string) (storedLease, bool, error) {
	l, ok, err := b.redlock.Holder(ctx, pipelineID)
	if err != nil || !ok {
		return storedLease{}, ok, err
	}
	return storedLease{token: l.Token, run: l.Run, owner: l.Owner, ttl: l.TTL, recordTTL: -1}, true, nil
}

func (b *quorumBackend) ping(ctx context.Context) error { return b.redlock.Ping(ctx) }

func (b *quorumBackend) prepare(ctx context.Context) error { return b.redlock.Prepare(ctx) }

func (b *quorumBackend) close() error { return b.redlock.Close() }

// startVerifier is implemented by backends that check their servers before
// the coordinator starts; an error makes Start fail.
type startVerifier interface {
	verifyStart(ctx context.Context) error
}

// verifyStart refuses a quorum that is not made of independent masters
// (quorum.Backend.VerifyStart).
func (b *quorumBackend) verifyStart(ctx context.Context) error { return b.redlock.VerifyStart(ctx) }

// quorumPrimary is the primary's part in Redlock mode (quorum.Primary): two
// single-node backends on the primary, differing in lease TTL only.
type quorumPrimary struct {
	primary  *singleBackend // completions, health, scripts
	reserver *singleBackend // the primary, with the reservation as lease TTL
}

func newQuorumPrimary(client redis.UniversalClient, s settings, reservation time.Duration) quorumPrimary {
	// The primary's two backends differ in lease TTL only: one key cache.
	keyCache := leasebackend.NewKeyCache(primaryKeys(s.KeyPrefix))
	p := quorumPrimary{primary: newSingleBackend(client, s, keyCache)}
	rs := s
	rs.LeaseTTL = reservation
	p.reserver = newSingleBackend(client, rs, keyCache)
	// Quorum leases keep to their TTL: the nodes know nothing of the
	// registry, so a takeover on the primary alone would only waste tokens.
	p.reserver.registry, p.reserver.registryArg = "", nil
	return p
}

// ReleaseReservation gives back l's reservation (the release compares the
// whole value, so a newer reservation by the same worker stays).
func (p quorumPrimary) ReleaseReservation(ctx context.Context, l quorum.Lease) error {
	_, err := p.reserver.release(ctx, primaryRef(l))
	return err
}

// Complete records l's run on the primary.
func (p quorumPrimary) Complete(ctx context.Context, l quorum.Lease) error {
	_, err := p.primary.complete(ctx, primaryRef(l))
	return err
}

// Ping checks the primary.
func (p quorumPrimary) Ping(ctx context.Context) error { return p.primary.ping(ctx) }

// Prepare loads the primary's scripts.
func (p quorumPrimary) Prepare(ctx context.Context) error { return p.primary.prepare(ctx) }

// ServerInfo returns the primary's INFO server.
func (p quorumPrimary) ServerInfo(ctx context.Context) (string, error) {
	return p.primary.client.Info(ctx, "server").Result()
}

// primaryRef is l as the coordinator refers to it.
func primaryRef(l quorum.Lease) leaseRef {
	return leaseRef{PipelineID: l.PipelineID, Owner: l.Owner, Token: l.Token, RunNumber: l.RunNumber, Mode: l.Mode}
}
