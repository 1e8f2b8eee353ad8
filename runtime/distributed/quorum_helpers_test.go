package distributed

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed/internal/quorum"
)

// quorumRig is a primary redis-server and n quorum redis-servers, each a
// real process on its own loopback port.
type quorumRig struct {
	t       *testing.T
	primary *redistest.Server
	nodes   []*redistest.Server
	logs    *logBuffer
	clients map[*redistest.Server]*redis.Client
}

func newQuorumRig(t *testing.T, n int) *quorumRig {
	t.Helper()
	r := &quorumRig{t: t, primary: redistest.Start(t), logs: &logBuffer{}, clients: map[*redistest.Server]*redis.Client{}}
	for range n {
		r.nodes = append(r.nodes, redistest.Start(t))
	}
	return r
}

// urls returns the quorum nodes' URLs.
func (r *quorumRig) urls() []string {
	out := make([]string, len(r.nodes))
	for i, s := range r.nodes {
		out[i] = s.URL()
	}
	return out
}

// options returns Options for a Redlock coordinator on the rig.
func (r *quorumRig) options(ttl time.Duration) Options {
	return Options{
		RedisURL:         r.primary.URL(),
		RedlockRedisURLs: r.urls(),
		LeaseTTL:         ttl,
		Logger:           slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
}

// coordinator builds a coordinator and closes it when the test ends.
func (r *quorumRig) coordinator(opts Options) *RedisWorkerCoordinator {
	r.t.Helper()
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		r.t.Fatalf("NewRedisWorkerCoordinator: %v", err)
	}
	r.t.Cleanup(func() { _ = c.Close() })
	return c
}

// started builds and starts a coordinator for workerID.
func (r *quorumRig) started(opts Options, workerID string) *RedisWorkerCoordinator {
	r.t.Helper()
	c := r.coordinator(opts)
	if err := c.Start(context.Background(), workerID, []string{"p"}); err != nil {
		r.t.Fatalf("Start: %v", err)
	}
	return c
}

// client returns a plain go-redis client on srv.
func (r *quorumRig) client(srv *redistest.Server) *redis.Client {
	r.t.Helper()
	if c := r.clients[srv]; c != nil {
		return c
	}
	opts, err := redis.ParseURL(srv.URL())
	if err != nil {
		r.t.Fatal(err)
	}
	opts.MaxRetries = -1
	opts.DialTimeout = 500 * time.Millisecond
	opts.ReadTimeout = 500 * time.Millisecond
	c := redis.NewClient(opts)
	r.t.Cleanup(func() { _ = c.Close() })
	r.clients[srv] = c
	return c
}

// nodeLease returns the lease quorum node i holds for pipelineID, split into
// its fields (nil when it holds none).
func (r *quorumRig) nodeLease(i int, pipelineID string) map[string]string {
	r.t.Helper()
	v, err := r.client(r.nodes[i]).Get(context.Background(), quorum.Keys{Prefix: DefaultKeyPrefix}.Lease(pipelineID)).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		r.t.Fatalf("read the lease on node %d: %v", i, err)
	}
	f := strings.SplitN(v, " ", 4)
	if len(f) != 4 {
		r.t.Fatalf("node %d holds a malformed lease %q", i, v)
	}
	return map[string]string{"token": f[0], "run": f[1], "mode": f[2], "owner": f[3], "worker": f[3][:strings.LastIndexByte(f[3], '#')]}
}

// leaseTokens returns the token each live node in idx holds for pipelineID
// ("" when none).
func (r *quorumRig) leaseTokens(pipelineID string, idx ...int) []string {
	r.t.Helper()
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = r.nodeLease(i, pipelineID)["token"]
	}
	return out
}

// reservationExists reports whether the primary holds a reservation for
// pipelineID.
func (r *quorumRig) reservationExists(pipelineID string) bool {
	r.t.Helper()
	n, err := r.client(r.primary).Exists(context.Background(), keys{prefix: DefaultKeyPrefix}.lease(pipelineID)).Result()
	if err != nil {
		r.t.Fatalf("read the primary: %v", err)
	}
	return n == 1
}

// quorumOf returns c's quorum backend.
func quorumOf(t *testing.T, c *RedisWorkerCoordinator) *quorumBackend {
	t.Helper()
	b, ok := c.backend.(*quorumBackend)
	if !ok {
		t.Fatalf("backend is %T, not the quorum backend", c.backend)
	}
	return b
}

// redlockStatus returns the Redlock part of c's status.
func redlockStatus(t *testing.T, c *RedisWorkerCoordinator) RedlockStatus {
	t.Helper()
	st := c.Status().(CoordinatorStatus)
	if st.Mode != "redlock" {
		t.Fatalf("status mode %q, want redlock", st.Mode)
	}
	rs, ok := st.Backend.(RedlockStatus)
	if !ok {
		t.Fatalf("status backend is %T, want RedlockStatus", st.Backend)
	}
	return rs
}

// mustNotAcquire fails unless c is refused pipelineID with (false, nil).
func mustNotAcquire(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, run int64) {
	t.Helper()
	ok, err := c.TryAcquireLease(context.Background(), pipelineID, slotRun(run))
	if ok || err != nil {
		t.Fatalf("TryAcquireLease(%q, %d) = %v, %v; want false, nil (held elsewhere)", pipelineID, run, ok, err)
	}
}

// mustFailSafe fails unless c is refused pipelineID with an error wrapping
// want.
func mustFailSafe(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, run int64, want error) error {
	t.Helper()
	ok, err := c.TryAcquireLease(context.Background(), pipelineID, slotRun(run))
	if ok || err == nil {
		t.Fatalf("TryAcquireLease(%q, %d) = %v, %v; want false and an error", pipelineID, run, ok, err)
	}
	if want != nil && !errors.Is(err, want) {
		t.Fatalf("TryAcquireLease error %q does not wrap %q", err, want)
	}
	return err
}
