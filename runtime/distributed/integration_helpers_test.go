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
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx, workerID, []string{"p"}); err != nil {
		r.t.Fatal(err)
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
