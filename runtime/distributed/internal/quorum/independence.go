package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrNotIndependent is wrapped by the error VerifyStart returns, and by the
// connection errors of a quorum node, when the nodes are not independent
// Redis masters: two URLs reach the same redis-server (the same INFO
// run_id, e.g. a host name and its IP address, or a TCP port and a unix
// socket), or a URL reaches a replica, a Redis Cluster node or a Sentinel.
// Counting one server twice would let a minority of real servers make a
// "majority". runtime/distributed exports it as ErrNotIndependent.
var ErrNotIndependent = errors.New("distributed: Redlock quorum nodes must be independent Redis masters")

// serverInfo is what INFO says about a server that matters for a quorum.
type serverInfo struct {
	runID   string
	role    string // master, slave
	mode    string // standalone, cluster, sentinel
	cluster bool   // cluster_enabled:1
}

// parseServerInfo reads the fields it needs from an INFO reply.
func parseServerInfo(text string) serverInfo {
	var si serverInfo
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "run_id":
			si.runID = v
		case "role":
			si.role = v
		case "redis_mode":
			si.mode = v
		case "cluster_enabled":
			si.cluster = v == "1"
		}
	}
	return si
}

// problem says why a server cannot be a quorum node, or "".
func (si serverInfo) problem() string {
	switch {
	case si.mode == "sentinel":
		return "is a Sentinel, not a data node"
	case si.cluster || si.mode == "cluster":
		return "is a Redis Cluster node; cluster shards fail over to replicas that may lack the latest writes and do not hold a pipeline's keys independently"
	case si.role == "slave" || si.role == "replica":
		return "is a replica; a replica is promoted without the writes it had not received yet, so it is not independent of its master"
	}
	return ""
}

// independenceGuard remembers the run id of each quorum node's server and
// refuses a connection that reaches a server another node already reaches.
// It runs on every new connection, so a name that starts pointing at
// another node's server later (DNS, a proxy) is caught too: that node then
// counts as down, never as a second vote.
type independenceGuard struct {
	mu     sync.Mutex
	runIDs []string
	shown  []string
}

func newIndependenceGuard(n int) *independenceGuard {
	return &independenceGuard{runIDs: make([]string, n), shown: make([]string, n)}
}

// onConnect returns the go-redis OnConnect hook for node i.
func (g *independenceGuard) onConnect(i int, shown string) func(context.Context, *redis.Conn) error {
	g.shown[i] = shown
	return func(ctx context.Context, cn *redis.Conn) error {
		text, err := cn.Info(ctx).Result()
		if err != nil {
			err = infoError(i, shown, err)
		} else {
			err = g.admit(i, parseServerInfo(text))
		}
		if err != nil {
			return &hookError{err: err}
		}
		return nil
	}
}

// hookError carries an OnConnect error through go-redis, which hands its
// callers the error's Unwrap rather than the error itself: unwrapped, it is
// the full error still.
type hookError struct{ err error }

func (e *hookError) Error() string { return e.err.Error() }
func (e *hookError) Unwrap() error { return e.err }

// infoError explains a failed INFO on node i.
func infoError(i int, shown string, err error) error {
	if redis.HasErrorPrefix(err, "NOPERM") {
		return fmt.Errorf("%w: RedlockRedisURLs[%d] (%s): INFO is not allowed, so the node cannot be checked (grant its ACL user +info): %w",
			ErrNotIndependent, i, shown, err)
	}
	return fmt.Errorf("distributed: RedlockRedisURLs[%d] (%s): INFO: %w", i, shown, err)
}

// admit checks node i's server and records its run id.
func (g *independenceGuard) admit(i int, si serverInfo) error {
	if p := si.problem(); p != "" {
		return fmt.Errorf("%w: RedlockRedisURLs[%d] (%s) %s", ErrNotIndependent, i, g.shown[i], p)
	}
	if si.runID == "" {
		// A server that does not report a run id cannot be compared; the
		// configured endpoints were already checked to differ.
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for j, id := range g.runIDs {
		if j != i && id == si.runID {
			return duplicateError(min(i, j), max(i, j), g.shown, si.runID)
		}
	}
	g.runIDs[i] = si.runID
	return nil
}

func duplicateError(i, j int, shown []string, runID string) error {
	return fmt.Errorf("%w: RedlockRedisURLs[%d] (%s) and RedlockRedisURLs[%d] (%s) reach the same redis-server (run_id %s); list each server once",
		ErrNotIndependent, i, shown[i], j, shown[j], runID)
}

// VerifyStart asks every quorum node (and the primary) for INFO and refuses
// a quorum that is not made of independent masters. The checks themselves
// are the guard's, which runs on every new connection, so asking each node
// once is enough: a replica, a Cluster node, a Sentinel or a second URL of
// one server fails its connection with ErrNotIndependent. Nodes that
// do not answer are not an error here (Start tolerates an outage); the
// guard checks them when they first connect. The primary may be a quorum
// node: it then counts once, like any other, and is marked in the status.
func (b *Backend) VerifyStart(ctx context.Context) error {
	if b.s.StartContext != nil {
		ctx = b.s.StartContext(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, b.s.OpTimeout)
	defer cancel()
	type answer struct {
		runID string
		err   error
	}
	infos := make([]answer, len(b.nodes))
	var primary answer
	var wg sync.WaitGroup
	wg.Go(func() {
		text, err := b.primary.ServerInfo(ctx)
		primary = answer{parseServerInfo(text).runID, err}
	})
	for i, n := range b.nodes {
		wg.Go(func() {
			text, err := n.client.Info(ctx, "server").Result()
			if err != nil && !errors.Is(err, ErrNotIndependent) {
				err = infoError(i, n.url.Redacted, err)
			}
			infos[i] = answer{parseServerInfo(text).runID, err}
		})
	}
	wg.Wait()

	var errs []error
	for i, a := range infos {
		n := b.nodes[i]
		switch {
		case errors.Is(a.err, ErrNotIndependent):
			errs = append(errs, a.err)
		case a.err != nil:
			b.observe(n, a.err)
			b.log.Warn("distributed: Redlock node unreachable at start; it is checked when it first answers",
				"node", i, "redis", n.url.Redacted, "error", b.s.Redactor.Wrap(a.err))
		default:
			b.observe(n, nil)
			if primary.err == nil && a.runID != "" && a.runID == primary.runID {
				n.isPrimary.Store(true)
				b.log.Info("distributed: a Redlock node is the primary Redis; it counts as one quorum node",
					"node", i, "redis", n.url.Redacted)
			}
		}
	}
	return errors.Join(errs...)
}
