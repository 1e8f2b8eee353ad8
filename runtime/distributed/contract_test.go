package distributed

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/coordinatortest"
	"github.com/agora-etl/agora/runtime/distributed/internal/quorum"
)

// The coordinator contract (runtime/coordinatortest) on every topology,
// and through a wrapper that only embeds the coordinator. Each subtest
// gets a key prefix of its own on a server (or cluster, or group) shared
// by the topology's subtests, and a fake clock, so the background loops
// (renewal, heartbeat) never run between the suite's calls.

// contractWrapper is what a user's logging wrapper looks like: it embeds
// the coordinator, so every method, Capabilities included, is forwarded.
type contractWrapper struct{ runtime.Coordinator }

// contractPrefix is the key prefix of the subtest t.
func contractPrefix(t *testing.T) string { return "agora:" + t.Name() + ":" }

// contractFactory returns a newCoordinator for coordinatortest.Run: a
// coordinator with the options base returns, the subtest's prefix and a
// fake clock, wrapped when wrap is set.
func contractFactory(base func() Options, wrap bool) func(t *testing.T) runtime.Coordinator {
	return func(t *testing.T) runtime.Coordinator {
		opts := base()
		opts.KeyPrefix = contractPrefix(t)
		opts.Clock = clocktest.NewFake(time.Now())
		opts.Logger = slog.New(slog.DiscardHandler)
		c, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if wrap {
			return contractWrapper{c}
		}
		return c
	}
}

// runContract runs the contract against base's coordinators, plain and
// wrapped, failing any case whose capability is missing (the Redis
// coordinator has them all, so a wrapper must keep them all); lose makes
// the servers forget a lease.
func runContract(t *testing.T, base func() Options, lose func(t *testing.T, prefix, pipelineID string, token int64)) {
	loseLease := coordinatortest.WithLoseLease(func(t *testing.T, c runtime.Coordinator, pipelineID string) {
		lease, held := c.CurrentLease(pipelineID)
		if !held {
			t.Fatalf("no lease of %q to lose", pipelineID)
		}
		lose(t, contractPrefix(t), pipelineID, lease.FencingToken)
	})
	t.Run("plain", func(t *testing.T) {
		coordinatortest.Run(t, contractFactory(base, false), loseLease, coordinatortest.Strict())
	})
	t.Run("wrapped", func(t *testing.T) {
		coordinatortest.Run(t, contractFactory(base, true), loseLease, coordinatortest.Strict())
	})
}

// del deletes keys through c, failing t on an error.
func del(t *testing.T, c redis.Cmdable, keys ...string) {
	t.Helper()
	if err := c.Del(context.Background(), keys...).Err(); err != nil {
		t.Fatalf("delete %v: %v", keys, err)
	}
}

// plainClient is a client on srv, closed when t ends.
func plainClient(t *testing.T, addr, password string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestContractSingleServer(t *testing.T) {
	srv := redistest.Start(t)
	runContract(t, func() Options { return Options{RedisURL: srv.URL(), LeaseTTL: 30 * time.Second} },
		func(t *testing.T, prefix, id string, _ int64) {
			del(t, plainClient(t, srv.Addr(), ""), keys{prefix: prefix}.lease(id))
		})
}

func TestContractCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	runContract(t, func() Options { return Options{RedisURL: cl.URL(), LeaseTTL: 30 * time.Second} },
		func(t *testing.T, prefix, id string, _ int64) {
			key := keys{prefix: prefix}.lease(id)
			del(t, cl.Client(cl.MasterOf(key)), key)
		})
}

func TestContractSentinel(t *testing.T) {
	g := redistest.StartSentinels(t, redistest.WithPassword(sentinelPassword))
	runContract(t, func() Options { return Options{RedisURL: g.URL(), LeaseTTL: sentinelTTL} },
		func(t *testing.T, prefix, id string, _ int64) {
			del(t, plainClient(t, g.Master().Addr(), sentinelPassword), keys{prefix: prefix}.lease(id))
		})
}

func TestContractRedlock(t *testing.T) {
	rig := newQuorumRig(t, 3)
	runContract(t, func() Options {
		return Options{RedisURL: rig.primary.URL(), RedlockRedisURLs: rig.urls(), LeaseTTL: 30 * time.Second}
	}, func(t *testing.T, prefix, id string, token int64) {
		// A renewal puts a lease back on a node that lost it, unless the
		// node saw it released: so the nodes forget it as released.
		del(t, plainClient(t, rig.primary.Addr(), ""), keys{prefix: prefix}.lease(id))
		nk := quorum.Keys{Prefix: prefix}.NodeKeys(id)
		for _, n := range rig.nodes {
			c := plainClient(t, n.Addr(), "")
			del(t, c, nk[0])
			if err := c.Set(context.Background(), nk[1], token, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
