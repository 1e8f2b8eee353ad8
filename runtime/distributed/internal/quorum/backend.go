package distributed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redisurl"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// Redlock quorum leases
//
// With RedlockRedisURLs set, a lease lives on a majority of independent
// Redis masters (the quorum nodes) while the primary keeps what must have a
// single authority: the worker registry, the fencing counter, the completed
// slots and Once markers.
//
// Acquire reserves the token on the primary with the single-node acquire
// script — slot rule, Once marker, token minted by the same monotonic rules
// — and then sets the lease, with that token, on every quorum node at once.
// It holds only when a majority accepted within the validity window.
//
// The script also leaves a short reservation on the primary (twice the
// per-node timeout): while one worker's acquisition is on its way to the
// nodes, another worker asking at the same moment is told the lease is held.
// Replicas firing the same cron slot together therefore never split the
// nodes' votes between them and leave the slot unrun. The reservation is not
// renewed, and a release gives it back off the critical path: exclusivity
// rests on the quorum alone, so a held lease needs no primary.
//
// Completed slots are recorded on the primary (authoritative, kept) and, for
// 2×LeaseTTL, on the quorum nodes: an acquisition that passed the primary's
// check just before another worker's completion was recorded there meets the
// copy on the nodes it needs. Any acquisition reaches its nodes within one
// validity window of its reservation, so 2×LeaseTTL is ample.
//
// Each node also keeps the largest token released on it (2×LeaseTTL) and
// refuses that one and smaller ones, so a worker that stalled between
// reserving a token and reaching the nodes cannot come back as a holder with
// an older token, and an acquire request overtaken by its own release cannot
// leave a lease behind.

// quorumBackend is the leaseBackend of Redlock mode.
type quorumBackend struct {
	primary  *singleBackend // completions, health, scripts
	reserver *singleBackend // the primary, with the reservation as lease TTL
	nodes    []*quorumNode
	quorum   int
	keys     quorumKeys
	nodeKeys *leasebackend.KeyCache // quorumKeys.nodeKeys per pipeline
	s        settings
	log      *slog.Logger
	guard    *independenceGuard

	// nodeTimeout bounds one request to one quorum node.
	nodeTimeout time.Duration
	// validity is how long a lease is counted valid from the moment before
	// its first request: LeaseTTL less the clock drift allowance.
	validity time.Duration
	// stateTTL is how long a node keeps its seen-token and completed-slot
	// copies.
	stateTTL time.Duration
	// reservation is how long the primary's reservation lasts.
	reservation time.Duration

	tasks *leasebackend.TaskPool
	bg    backgroundWork

	failedAcquisitions atomic.Uint64 // token reserved, no quorum in time
	lateAcquisitions   atomic.Uint64 // of those: a majority, but too late
	reseated           atomic.Uint64 // leases put back on a node that lost them
	lostRenewals       atomic.Uint64 // renewals a majority refused
}

// Timings of quorum requests.
const (
	// maxNodeTimeout caps the per-node timeout: a healthy node answers in
	// well under a millisecond on a LAN, so waiting longer only lets a
	// stalled node eat into the validity window.
	maxNodeTimeout = 250 * time.Millisecond
	// nodeTimeoutShare is the share of LeaseTTL one node may take, below
	// the cap.
	nodeTimeoutShare = 10
	// driftFloor is the fixed part of the clock drift allowance: the
	// granularity of Redis expiry.
	driftFloor = 2 * time.Millisecond
)

// quorumNodeTimeout returns the per-node timeout for ttl: a tenth of it, at
// most maxNodeTimeout and at least a millisecond.
func quorumNodeTimeout(ttl time.Duration) time.Duration {
	return max(min(ttl/nodeTimeoutShare, maxNodeTimeout), time.Millisecond)
}

// quorumValidity returns how long a lease set with ttl is counted valid,
// measured from before its first request: ttl − (ttl × drift + 2 ms).
func quorumValidity(ttl time.Duration, drift float64) time.Duration {
	return ttl - time.Duration(float64(ttl)*drift) - driftFloor
}

// majority returns the quorum size for n nodes.
func majority(n int) int { return n/2 + 1 }

func newQuorumBackend(primary redis.UniversalClient, s settings) (leaseBackend, error) {
	if len(s.quorum) < minRedlockNodes {
		return nil, fmt.Errorf("%w: RedlockRedisURLs names %d server(s); quorum mode needs at least %d", ErrInvalidConfig, len(s.quorum), minRedlockNodes)
	}
	// The primary's two backends differ in lease TTL only: one key cache.
	primaryKeyCache := leasebackend.NewKeyCache(primaryKeys(s.KeyPrefix))
	qk := quorumKeys{prefix: s.KeyPrefix}
	b := &quorumBackend{
		primary:     newSingleBackend(primary, s, primaryKeyCache),
		quorum:      majority(len(s.quorum)),
		keys:        qk,
		nodeKeys:    leasebackend.NewKeyCache(qk.nodeKeys),
		s:           s,
		log:         s.Logger,
		nodeTimeout: quorumNodeTimeout(s.LeaseTTL),
		validity:    quorumValidity(s.LeaseTTL, s.RedlockClockDriftFactor),
		stateTTL:    2 * s.LeaseTTL,
		tasks:       leasebackend.NewTaskPool(),
	}
	b.reservation = min(2*b.nodeTimeout, s.LeaseTTL)
	rs := s
	rs.LeaseTTL = b.reservation
	b.reserver = newSingleBackend(primary, rs, primaryKeyCache)
	// Quorum leases keep to their TTL: the nodes know nothing of the
	// registry, so a takeover on the primary alone would only waste tokens.
	b.reserver.registry, b.reserver.registryArg = "", nil
	if b.validity <= b.nodeTimeout {
		return nil, fmt.Errorf("%w: LeaseTTL %s with RedlockClockDriftFactor %v leaves a lease valid for %s, not more than one quorum request may take (%s); raise LeaseTTL or lower the drift factor",
			ErrInvalidConfig, s.LeaseTTL, s.RedlockClockDriftFactor, b.validity, b.nodeTimeout)
	}
	b.guard = newIndependenceGuard(len(s.quorum))
	for i, u := range s.quorum {
		o := *u.Options
		// As for the primary: honour context deadlines on socket reads, and
		// fail fast on a dead node instead of re-dialling for half a second.
		o.ContextTimeoutEnabled = true
		if o.DialerRetries == 0 {
			o.DialerRetries = 2
		}
		if o.DialerRetryTimeout == 0 {
			o.DialerRetryTimeout = 10 * time.Millisecond
		}
		// One retry, not go-redis's three with growing pauses (about
		// 120 ms against a dead node): enough for a connection broken by a
		// restart, without spending the validity window on a node that is
		// gone.
		if o.MaxRetries == 0 {
			o.MaxRetries = 1
		}
		// RESP2 unless the URL asks otherwise: quorum requests never use
		// RESP3 push notifications, and without them each reply is read
		// without first peeking for one.
		if u.Options.Protocol == 0 {
			o.Protocol = 2
		}
		o.OnConnect = b.guard.onConnect(i, u.Redacted)
		b.nodes = append(b.nodes, &quorumNode{index: i, url: u, client: redis.NewClient(&o)})
	}
	return b, nil
}

// quorumNode is one quorum member and what is known of its health.
type quorumNode struct {
	index  int
	url    redisurl.URL
	client *redis.Client

	reachable atomic.Bool
	contacted atomic.Bool
	failures  atomic.Uint64
	lastError atomic.Pointer[string]
	isPrimary atomic.Bool
}

// observe records the outcome of one request to n. An error reply from the
// server still means the node answered, except when the independence guard
// refused the connection (a NOPERM on its INFO is a reply too): a refused
// node counts as down.
func (b *quorumBackend) observe(n *quorumNode, err error) {
	first := !n.contacted.Swap(true)
	if err != nil {
		n.failures.Add(1)
		msg := b.s.redactor.Redact(err.Error())
		n.lastError.Store(&msg)
	}
	up := err == nil || (isReplyError(err) && !errors.Is(err, ErrQuorumNotIndependent))
	// Logged on changes only; a node found up at first contact is the
	// normal case and says nothing.
	if was := n.reachable.Swap(up); was != up && !(first && up) {
		if up {
			b.log.Info("distributed: Redlock node reachable", "node", n.index, "redis", n.url.Redacted)
		} else {
			b.log.Warn("distributed: Redlock node unreachable", "node", n.index, "redis", n.url.Redacted,
				"error", b.s.redactor.Wrap(err))
		}
	}
}

// isReplyError reports whether err is an error reply from a server (which
// did answer) rather than a transport failure.
func isReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.DeadlineExceeded)
}

// describe names node i in messages.
func (n *quorumNode) describe() string {
	return fmt.Sprintf("RedlockRedisURLs[%d] (%s)", n.index, n.url.Redacted)
}

// quorumKeys builds the keys kept on quorum nodes. They differ from the
// primary's, so the primary can also serve as a quorum node.
//
//	<prefix>redlock:lease:{<pipeline>}  string "<token> <run> <mode> <owner>"; PX LeaseTTL
//	<prefix>redlock:seen:{<pipeline>}   string: largest token released here; PX 2×LeaseTTL
//	<prefix>redlock:done:{<pipeline>}   string: copy of the last completed slot; PX 2×LeaseTTL
//	<prefix>redlock:once:{<pipeline>}   string: copy of the Once marker; PX 2×LeaseTTL
type quorumKeys struct{ prefix string }

func (k quorumKeys) key(kind, pipelineID string) string {
	return k.prefix + "redlock:" + kind + ":{" + pipelineID + "}"
}

func (k quorumKeys) lease(pipelineID string) string { return k.key("lease", pipelineID) }

// nodeKeys returns lease, seen, done and once: the order every quorum
// script expects.
func (k quorumKeys) nodeKeys(pipelineID string) []string {
	return []string{k.key("lease", pipelineID), k.key("seen", pipelineID), k.key("done", pipelineID), k.key("once", pipelineID)}
}

// nodeValue is a lease as quorum nodes store it, "<token> <run> <mode>
// <owner>": renew and release compare it whole, so owner and token must both
// match, and the worker id is the owner's prefix.
func nodeValue(ref leaseRef) string {
	return strconv.FormatInt(ref.Token, 10) + " " + strconv.FormatInt(runOf(ref), 10) + " " +
		strconv.FormatInt(ref.Mode, 10) + " " + ref.Owner
}

// runOf returns the run number a lease was given: the slot, or the token
// for RunNumberAuto and RunNumberOnce (as the primary numbers them).
func runOf(ref leaseRef) int64 {
	switch {
	case ref.RunNumber != 0:
		return ref.RunNumber
	case ref.Mode > 0:
		return ref.Mode
	}
	return ref.Token
}

func (b *quorumBackend) close() error {
	b.waitBackground()
	b.tasks.Close()
	var errs []error
	for _, n := range b.nodes {
		if err := n.client.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
