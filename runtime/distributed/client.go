package distributed

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redisurl"
)

// Client defaults agora sets on every topology, unless the URL sets them.
const (
	// clientDialerRetries and clientDialerRetryTimeout replace go-redis's
	// 5 dials 100 ms apart before a command fails: a lease request against
	// a dead server should fail fast (fail-safe); the pool still re-dials.
	clientDialerRetries      = 2
	clientDialerRetryTimeout = 50 * time.Millisecond
)

// newPrimaryClient builds the go-redis client for the primary URL: a Client
// for one server, a ClusterClient for a Redis Cluster, a failover Client
// (which asks the Sentinels for the primary and follows it when they fail
// over) for Sentinel. Every one honours context deadlines on socket reads:
// without that, a stalled server would hold a renewal past the lease's
// deadline. On one server and with Sentinel, watch checks every new
// connection's server before the connection carries a command (see
// epoch.go); nil checks nothing.
func newPrimaryClient(u redisurl.URL, watch *stateWatch) redis.UniversalClient {
	switch u.Topology {
	case redisurl.Cluster:
		o := *u.Cluster
		o.ContextTimeoutEnabled = true
		o.DialerRetries, o.DialerRetryTimeout = dialDefaults(o.DialerRetries, o.DialerRetryTimeout)
		return redis.NewClusterClient(&o)
	case redisurl.Sentinel:
		o := *u.Failover
		o.ContextTimeoutEnabled = true
		o.DialerRetries, o.DialerRetryTimeout = dialDefaults(o.DialerRetries, o.DialerRetryTimeout)
		if watch != nil {
			watch.next, o.OnConnect = o.OnConnect, watch.onConnect
		}
		return redis.NewFailoverClient(&o)
	default:
		o := *u.Options
		o.ContextTimeoutEnabled = true
		o.DialerRetries, o.DialerRetryTimeout = dialDefaults(o.DialerRetries, o.DialerRetryTimeout)
		if watch != nil {
			watch.next, o.OnConnect = o.OnConnect, watch.onConnect
		}
		return redis.NewClient(&o)
	}
}

func dialDefaults(retries int, timeout time.Duration) (int, time.Duration) {
	if retries == 0 {
		retries = clientDialerRetries
	}
	if timeout == 0 {
		timeout = clientDialerRetryTimeout
	}
	return retries, timeout
}

// forEachPrimaryNode runs fn on every node that holds keys: each master of
// a Redis Cluster, concurrently, or the one server (the current primary
// with Sentinel). Commands without keys, such as SCAN and SCRIPT LOAD,
// reach one node only when sent through a ClusterClient, so what must
// cover the whole keyspace goes through here.
func forEachPrimaryNode(ctx context.Context, client redis.UniversalClient, fn func(ctx context.Context, node redis.Cmdable) error) error {
	cluster, ok := client.(*redis.ClusterClient)
	if !ok {
		return fn(ctx, client)
	}
	return cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		return fn(ctx, node)
	})
}

// collectFromPrimaryNodes runs fn on every node as forEachPrimaryNode does
// and joins what the nodes return.
func collectFromPrimaryNodes[T any](ctx context.Context, client redis.UniversalClient, fn func(ctx context.Context, node redis.Cmdable) ([]T, error)) ([]T, error) {
	var (
		mu  sync.Mutex
		all []T
	)
	err := forEachPrimaryNode(ctx, client, func(ctx context.Context, node redis.Cmdable) error {
		got, err := fn(ctx, node)
		mu.Lock()
		all = append(all, got...)
		mu.Unlock()
		return err
	})
	return all, err
}
