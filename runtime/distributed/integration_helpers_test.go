package distributed

import (
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
)

// real is a set of coordinators on one real redis-server with the system
// clock.
type real struct {
	t    *testing.T
	srv  *redistest.Server
	logs *logBuffer
}

func newReal(t *testing.T, opts ...redistest.Option) *real {
	t.Helper()
	return &real{t: t, srv: redistest.Start(t, opts...), logs: &logBuffer{}}
}

func (r *real) options(ttl time.Duration) Options {
	return Options{
		RedisURL: r.srv.URL(),
		LeaseTTL: ttl,
		Logger:   slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
}

func (r *real) started(opts Options, workerID string) *RedisWorkerCoordinator {
	r.t.Helper()
	return startCoordinator(r.t, opts, workerID, []string{"p"})
}

// startCoordinator builds a coordinator from opts, starts it for workerID
// and pipelines, and closes it when the test ends.
func startCoordinator(t testing.TB, opts Options, workerID string, pipelines []string) *RedisWorkerCoordinator {
	t.Helper()
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx, workerID, pipelines); err != nil {
		t.Fatal(err)
	}
	return c
}

// client returns a plain go-redis client on database db of the server.
func (r *real) client(db int) *redis.Client {
	opts, err := redis.ParseURL(r.srv.URLForDB(db))
	if err != nil {
		r.t.Fatal(err)
	}
	c := redis.NewClient(opts)
	r.t.Cleanup(func() { _ = c.Close() })
	return c
}
