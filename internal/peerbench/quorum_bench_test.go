package peerbench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncpool "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// redlockBenchCyclers sets up, on the same three quorum servers, this
// coordinator in Redlock mode (with its primary on a fourth server: one
// primary round trip to reserve the token, then one parallel round trip to
// the nodes; the release is one parallel round trip to the nodes and the
// primary) and go-redsync's Mutex, by default and with WithFailFast.
func redlockBenchCyclers(b *testing.B, primary *redistest.Server, nodes []*redistest.Server) map[string]cycler {
	urls := make([]string, len(nodes))
	pools := make([]redsyncpool.Pool, len(nodes))
	for i, n := range nodes {
		urls[i] = n.URL()
		opts, err := redis.ParseURL(n.URL())
		if err != nil {
			b.Fatal(err)
		}
		client := redis.NewClient(opts)
		b.Cleanup(func() { _ = client.Close() })
		pools[i] = goredis.NewPool(client)
	}
	coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{
		RedisURL:         primary.URL(),
		RedlockRedisURLs: urls,
		LeaseTTL:         time.Minute,
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = coord.Close() })
	if err := coord.Start(context.Background(), "bench", []string{"bench"}); err != nil {
		b.Fatal(err)
	}
	rs := redsync.New(pools...)
	mutexCycler := func(m *redsync.Mutex) cycler {
		return func(ctx context.Context) error {
			if err := m.LockContext(ctx); err != nil {
				return err
			}
			ok, err := m.UnlockContext(ctx)
			if err == nil && !ok {
				err = errors.New("redsync: unlock reported not held")
			}
			return err
		}
	}
	return map[string]cycler{
		"agora":   coordinatorCycler(coord),
		"redsync": mutexCycler(rs.NewMutex("redsync:bench", redsync.WithExpiry(time.Minute), redsync.WithTries(1))),
		"redsync-failfast": mutexCycler(rs.NewMutex("redsync-ff:bench",
			redsync.WithExpiry(time.Minute), redsync.WithTries(1), redsync.WithFailFast(true))),
	}
}

// BenchmarkRedlockAcquireRelease measures one acquire+release cycle after
// another on three real redis-server quorum nodes: this coordinator (which
// also reserves a fencing token on its primary and checks the slot rule)
// beside go-redsync v4 on the same three servers, by default and with
// WithFailFast, in the same run. The "ratio" case interleaves them in
// rounds, so that drift in the machine's speed hits all alike, and reports
// this coordinator's throughput relative to each.
func BenchmarkRedlockAcquireRelease(b *testing.B) {
	primary := redistest.Start(b)
	nodes := []*redistest.Server{redistest.Start(b), redistest.Start(b), redistest.Start(b)}
	cyclers := redlockBenchCyclers(b, primary, nodes)
	names := []string{"agora", "redsync", "redsync-failfast"}
	benchEach(b, cyclers, names...)
	b.Run("ratio", func(b *testing.B) {
		spent, _ := interleave(b, cyclers, names, 250)
		b.ReportMetric(spent["redsync"].Seconds()/spent["agora"].Seconds(), "agora/redsync")
		b.ReportMetric(spent["redsync-failfast"].Seconds()/spent["agora"].Seconds(), "agora/redsync-failfast")
	})
}
