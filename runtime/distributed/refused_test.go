package distributed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
)

// Rule: a Redis that answers the coordinator's writes with an error reply
// (OOM under maxmemory/noeviction, READONLY, NOPERM, ...) is not
// unreachable: the worker logs it once as refused with the server's reason,
// counts it, reports not ready (/readyz 503, agora_coordinator_up 0) until
// a heartbeat succeeds again, and logs the recovery.
func TestRefusedWritesUnderOOMMakeTheWorkerUnreadyUntilMemoryIsFreed(t *testing.T) {
	r := newReal(t, redistest.WithArgs("--maxmemory-policy", "noeviction"))
	opts := r.options(5 * time.Second)
	opts.HeartbeatInterval = 50 * time.Millisecond
	coord, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Close() })
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(opts.Logger),
		runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false), runtime.WithMetrics(metrics.New())).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Hour),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
			}})
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	<-pool.Started()
	addr := pool.HealthAddr()
	waitReady(t, addr, http.StatusOK, "before the fill")

	rc := r.client(0)
	setMaxmemoryAboveUse(t, rc, 1<<20)
	fillUntilOOM(t, rc)
	// Below what the server uses now, so that no write fits however the
	// server's own use moves; deleting the fill brings it back under.
	setMaxmemoryAboveUse(t, rc, -512<<10)

	body := waitReady(t, addr, http.StatusServiceUnavailable, "under OOM")
	if !strings.Contains(body, "OOM") {
		t.Errorf("/readyz under OOM says %q; want the server's reason", body)
	}
	if m := metricWith(scrapeHTTP(t, addr), "agora_coordinator_up", "", ""); m.GetGauge().GetValue() != 0 {
		t.Errorf("agora_coordinator_up = %v under OOM, want 0", m)
	}
	if err := coord.Healthy(ctx); !errors.Is(err, ErrRedisRefusing) {
		t.Errorf("Healthy under OOM = %v, want ErrRedisRefusing", err)
	}
	logs := r.logs.String()
	if strings.Contains(logs, "Redis unreachable") {
		t.Errorf("an OOM was logged as unreachable:\n%s", logs)
	}
	if n := r.logs.count("distributed: Redis refused"); n != 1 {
		t.Errorf("%d refusal lines, want one:\n%s", n, logs)
	}
	if !strings.Contains(logs, `reason="OOM command not allowed`) {
		t.Errorf("the refusal line does not give the server's reason:\n%s", logs)
	}
	st := coord.Status().(CoordinatorStatus)
	if st.Refused == 0 || !strings.HasPrefix(st.RefusedReason, "OOM") || !st.Reachable {
		t.Errorf("status under OOM: refused %d, reason %q, reachable %v", st.Refused, st.RefusedReason, st.Reachable)
	}
	if m := metricWith(scrapeHTTP(t, addr), "agora_coordinator_refused_total", "", ""); m.GetCounter().GetValue() < 1 {
		t.Errorf("agora_coordinator_refused_total = %v, want at least 1", m)
	}

	deleteFill(t, rc)
	waitReady(t, addr, http.StatusOK, "after freeing memory")
	if m := metricWith(scrapeHTTP(t, addr), "agora_coordinator_up", "", ""); m.GetGauge().GetValue() != 1 {
		t.Errorf("agora_coordinator_up = %v after recovery, want 1", m)
	}
	if !strings.Contains(r.logs.String(), "distributed: Redis accepts writes again") {
		t.Errorf("no recovery line:\n%s", r.logs.String())
	}
	if st := coord.Status().(CoordinatorStatus); st.RefusedReason != "" {
		t.Errorf("refused reason %q after recovery", st.RefusedReason)
	}
	mustAcquire(t, coord, "p", nearSlot(thisSlot()+1))
}

// Rule: an error reply is a refusal only for the replies that mean the
// server will not take the write; a dial error or a timeout is an outage.
func TestRefusedReplyClassification(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{redisReply("OOM command not allowed when used memory > 'maxmemory'."), true},
		{redisReply("READONLY You can't write against a read only replica."), true},
		{redisReply("NOPERM this user has no permissions to run the 'evalsha' command"), true},
		{redisReply("MISCONF Redis is configured to save RDB snapshots"), true},
		{fmt.Errorf("acquire: %w", redisReply("OOM command not allowed")), true},
		{redis.Nil, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{context.DeadlineExceeded, false},
	} {
		_, got := refusedReply(tc.err)
		if got != tc.want {
			t.Errorf("refusedReply(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// redisReply is an error as go-redis returns for an error reply.
func redisReply(msg string) error { return replyError(msg) }

type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// waitReady polls /readyz until it answers want, and returns the body.
func waitReady(t *testing.T, addr string, want int, when string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == want {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz %s: %s %s, want %d", when, resp.Status, b, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fillUntilOOM writes fill:* keys until the server refuses one for memory.
func fillUntilOOM(t *testing.T, rc *redis.Client) {
	t.Helper()
	value := strings.Repeat("x", 10<<10)
	for i := 0; ; i++ {
		err := rc.Set(ctx, fmt.Sprintf("fill:%d", i), value, 0).Err()
		if err != nil && strings.HasPrefix(err.Error(), "OOM") {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if i == 10000 {
			t.Fatal("the server never ran out of memory")
		}
	}
}

// deleteFill deletes the fill:* keys.
func deleteFill(t *testing.T, rc *redis.Client) {
	t.Helper()
	var cursor uint64
	for {
		keys, next, err := rc.Scan(ctx, cursor, "fill:*", 1000).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			if err := rc.Del(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if cursor = next; cursor == 0 {
			return
		}
	}
}

// Rule: a worker started while Redis is out of memory says Redis refused
// it, not that Redis is unreachable, and is not ready until memory is freed.
func TestRefusedAtStartIsNotUnreachable(t *testing.T) {
	r := newReal(t, redistest.WithArgs("--maxmemory-policy", "noeviction"))
	rc := r.client(0)
	setMaxmemoryAboveUse(t, rc, 1<<20)
	fillUntilOOM(t, rc)
	setMaxmemoryAboveUse(t, rc, -512<<10)
	c := r.started(r.options(5*time.Second), "a")
	if err := c.Healthy(ctx); !errors.Is(err, ErrRedisRefusing) {
		t.Errorf("Healthy after a start under OOM = %v, want ErrRedisRefusing", err)
	}
	logs := r.logs.String()
	if strings.Contains(logs, "unreachable") || !strings.Contains(logs, "distributed: Redis refused the") {
		t.Errorf("a start under OOM is not logged as refused:\n%s", logs)
	}
	deleteFill(t, rc)
	if err := c.Healthy(ctx); err != nil {
		t.Errorf("Healthy after freeing memory = %v", err)
	}
}

// Rule: with FallbackToLocal, an acquire Redis refuses runs on a local
// lease, logged as refused rather than unreachable, and the worker stays
// ready (it can run).
func TestRefusedAcquireWithFallbackToLocal(t *testing.T) {
	r := newReal(t, redistest.WithArgs("--maxmemory-policy", "noeviction"))
	opts := r.options(5 * time.Second)
	opts.FallbackToLocal = true
	c := r.started(opts, "a")
	rc := r.client(0)
	setMaxmemoryAboveUse(t, rc, 1<<20)
	fillUntilOOM(t, rc)
	setMaxmemoryAboveUse(t, rc, -512<<10)
	ok, err := c.TryAcquireLease(ctx, "p", slotRun(thisSlot()))
	if !ok || err != nil {
		t.Fatalf("acquire under OOM with FallbackToLocal = %v, %v; want a local lease", ok, err)
	}
	if l, _ := c.CurrentLease("p"); l.Fenced() {
		t.Fatalf("lease %+v, want unfenced", l)
	}
	logs := r.logs.String()
	if strings.Contains(logs, "unreachable") || !strings.Contains(logs, "Redis refused the acquire; running on an unfenced local lease") {
		t.Errorf("the fallback is not logged as refused:\n%s", logs)
	}
	if err := c.Healthy(ctx); err != nil {
		t.Errorf("Healthy with FallbackToLocal under OOM = %v, want nil", err)
	}
}
