package quorum

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

// Settings is what the quorum backend needs of the coordinator's
// configuration; the coordinator fills it from its Options.
type Settings struct {
	// Nodes are the quorum nodes (RedlockRedisURLs), in order.
	Nodes []redisurl.URL
	// Primary is the primary Redis's URL, password redacted, for messages.
	Primary string
	// KeyPrefix is put before every key on the nodes.
	KeyPrefix string
	// LeaseTTL is how long a lease is set for on each node.
	LeaseTTL time.Duration
	// ClockDriftFactor is RedlockClockDriftFactor.
	ClockDriftFactor float64
	// OnceTTL is how long a completed Once run keeps others from running
	// it; the nodes' copy of the marker lasts as long.
	OnceTTL time.Duration
	// OpTimeout bounds the requests made off any caller's deadline: the
	// start checks and the release of a reservation.
	OpTimeout time.Duration
	// Redactor removes the URLs' passwords from error messages.
	Redactor *redisurl.Redactor
	// Logger receives the nodes' changes of health.
	Logger *slog.Logger
	// StartContext tags the context of the start checks (VerifyStart), for
	// the coordinator's request metrics; nil leaves it as it is.
	StartContext func(context.Context) context.Context
}

// Lease identifies one pipeline's lease: the fields of the coordinator's
// lease reference the nodes need.
type Lease struct {
	PipelineID string
	Owner      string
	Token      int64
	RunNumber  int64
	Mode       int64 // the requested run number: > 0 slot, RunNumberAuto, RunNumberOnce
}

// Primary is what the quorum backend asks of the primary Redis, which
// mints the tokens and keeps the authoritative record of completed runs.
type Primary interface {
	// ReleaseReservation gives back the reservation the primary's acquire
	// left for l.
	ReleaseReservation(ctx context.Context, l Lease) error
	// Complete records l's run as completed on the primary.
	Complete(ctx context.Context, l Lease) error
	// Ping checks that the primary answers.
	Ping(ctx context.Context) error
	// Prepare readies the primary (loads its scripts).
	Prepare(ctx context.Context) error
	// ServerInfo returns the primary's INFO server reply.
	ServerInfo(ctx context.Context) (string, error)
}

// Backend keeps leases on a quorum of Redis nodes.
type Backend struct {
	primary  Primary
	nodes    []*Node
	quorum   int
	keys     Keys
	nodeKeys *leasebackend.KeyCache // Keys.NodeKeys per pipeline
	s        Settings
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

// NodeTimeout returns the per-node timeout for ttl: a tenth of it, at
// most 250 ms and at least a millisecond.
func NodeTimeout(ttl time.Duration) time.Duration {
	return max(min(ttl/nodeTimeoutShare, maxNodeTimeout), time.Millisecond)
}

// Validity returns how long a lease set with ttl is counted valid,
// measured from before its first request: ttl − (ttl × drift + 2 ms).
func Validity(ttl time.Duration, drift float64) time.Duration {
	return ttl - time.Duration(float64(ttl)*drift) - driftFloor
}

// Majority returns the quorum size for n nodes.
func Majority(n int) int { return n/2 + 1 }

// New returns a backend on s.Nodes, with one client per node; it does not
// connect yet. The caller has checked s: at least three nodes, and a
// Validity longer than the NodeTimeout.
func New(s Settings, primary Primary) *Backend {
	qk := Keys{Prefix: s.KeyPrefix}
	b := &Backend{
		primary:     primary,
		quorum:      Majority(len(s.Nodes)),
		keys:        qk,
		nodeKeys:    leasebackend.NewKeyCache(qk.NodeKeys),
		s:           s,
		log:         s.Logger,
		nodeTimeout: NodeTimeout(s.LeaseTTL),
		validity:    Validity(s.LeaseTTL, s.ClockDriftFactor),
		stateTTL:    2 * s.LeaseTTL,
		tasks:       leasebackend.NewTaskPool(),
	}
	b.guard = newIndependenceGuard(len(s.Nodes))
	for i, u := range s.Nodes {
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
		b.nodes = append(b.nodes, &Node{index: i, url: u, client: redis.NewClient(&o)})
	}
	return b
}

// Quorum returns how many nodes must accept a lease.
func (b *Backend) Quorum() int { return b.quorum }

// NodeTimeout returns the bound of one request to one node.
func (b *Backend) NodeTimeout() time.Duration { return b.nodeTimeout }

// Validity returns how long a granted or renewed lease counts as valid,
// from before its first request.
func (b *Backend) Validity() time.Duration { return b.validity }

// Nodes returns the quorum nodes, in the order of Settings.Nodes.
func (b *Backend) Nodes() []*Node { return b.nodes }

// Node is one quorum member and what is known of its health.
type Node struct {
	index  int
	url    redisurl.URL
	client *redis.Client

	reachable atomic.Bool
	contacted atomic.Bool
	failures  atomic.Uint64
	lastError atomic.Pointer[string]
	isPrimary atomic.Bool
}

// Client returns the node's client (e.g. to add a hook).
func (n *Node) Client() *redis.Client { return n.client }

// URL returns the node's URL.
func (n *Node) URL() redisurl.URL { return n.url }

// Reachable reports whether the node answered its last request.
func (n *Node) Reachable() bool { return n.reachable.Load() }

// Contacted reports whether a request to the node has ended yet.
func (n *Node) Contacted() bool { return n.contacted.Load() }

// observe records the outcome of one request to n. An error reply from the
// server still means the node answered, except when the independence guard
// refused the connection (a NOPERM on its INFO is a reply too): a refused
// node counts as down.
func (b *Backend) observe(n *Node, err error) {
	first := !n.contacted.Swap(true)
	if err != nil {
		n.failures.Add(1)
		msg := b.s.Redactor.Redact(err.Error())
		n.lastError.Store(&msg)
	}
	up := err == nil || (isReplyError(err) && !errors.Is(err, ErrNotIndependent))
	// Logged on changes only; a node found up at first contact is the
	// normal case and says nothing.
	if was := n.reachable.Swap(up); was != up && !(first && up) {
		if up {
			b.log.Info("distributed: Redlock node reachable", "node", n.index, "redis", n.url.Redacted)
		} else {
			b.log.Warn("distributed: Redlock node unreachable", "node", n.index, "redis", n.url.Redacted,
				"error", b.s.Redactor.Wrap(err))
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
func (n *Node) describe() string {
	return fmt.Sprintf("RedlockRedisURLs[%d] (%s)", n.index, n.url.Redacted)
}

// Keys builds the keys kept on quorum nodes. They differ from the
// primary's, so the primary can also serve as a quorum node.
//
//	<prefix>redlock:lease:{<pipeline>}  string "<token> <run> <mode> <owner>"; PX LeaseTTL
//	<prefix>redlock:seen:{<pipeline>}   string: largest token released here; PX 2×LeaseTTL
//	<prefix>redlock:done:{<pipeline>}   string: copy of the last completed slot; PX 2×LeaseTTL
//	<prefix>redlock:once:{<pipeline>}   string: copy of the Once marker; PX 2×LeaseTTL
type Keys struct{ Prefix string }

func (k Keys) key(kind, pipelineID string) string {
	return k.Prefix + "redlock:" + kind + ":{" + pipelineID + "}"
}

// Lease returns the key of pipelineID's lease on a node.
func (k Keys) Lease(pipelineID string) string { return k.key("lease", pipelineID) }

// NodeKeys returns lease, seen, done and once: the order every quorum
// script expects.
func (k Keys) NodeKeys(pipelineID string) []string {
	return []string{k.key("lease", pipelineID), k.key("seen", pipelineID), k.key("done", pipelineID), k.key("once", pipelineID)}
}

// nodeValue is a lease as quorum nodes store it, "<token> <run> <mode>
// <owner>": renew and release compare it whole, so owner and token must both
// match, and the worker id is the owner's prefix.
func nodeValue(l Lease) string {
	return strconv.FormatInt(l.Token, 10) + " " + strconv.FormatInt(runOf(l), 10) + " " +
		strconv.FormatInt(l.Mode, 10) + " " + l.Owner
}

// runOf returns the run number a lease was given: the slot, or the token
// for RunNumberAuto and RunNumberOnce (as the primary numbers them).
func runOf(l Lease) int64 {
	switch {
	case l.RunNumber != 0:
		return l.RunNumber
	case l.Mode > 0:
		return l.Mode
	}
	return l.Token
}

// Close waits for the background work and closes the nodes' clients.
func (b *Backend) Close() error {
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
