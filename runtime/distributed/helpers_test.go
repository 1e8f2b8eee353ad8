package distributed

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora-etl/agora/internal/syncbuf"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// testStart is the fake clock's starting point in unit tests.
var testStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// logBuffer is a concurrency-safe log sink for asserting on log lines.
type logBuffer struct{ syncbuf.Buffer }

func (b *logBuffer) count(substr string) int { return strings.Count(b.String(), substr) }

// unit is a coordinator on miniredis with a fake clock.
type unit struct {
	t     *testing.T
	mr    *miniredis.Miniredis
	clock *clocktest.Fake
	logs  *logBuffer
}

func newUnit(t *testing.T) *unit {
	t.Helper()
	mr := miniredis.RunT(t)
	mr.SetTime(testStart)
	return &unit{t: t, mr: mr, clock: clocktest.NewFake(testStart), logs: &logBuffer{}}
}

// options returns Options for a coordinator on u's server, clock and log.
func (u *unit) options() Options {
	return Options{
		RedisURL: "redis://" + u.mr.Addr() + "/0",
		LeaseTTL: 30 * time.Second,
		Logger:   slog.New(slog.NewTextHandler(u.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Clock:    u.clock,
	}
}

// coordinator builds a coordinator from opts and closes it when the test ends.
func (u *unit) coordinator(opts Options) *RedisWorkerCoordinator {
	u.t.Helper()
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		u.t.Fatalf("NewRedisWorkerCoordinator: %v", err)
	}
	u.t.Cleanup(func() { _ = c.Close() })
	return c
}

// started builds and starts a coordinator for workerID.
func (u *unit) started(opts Options, workerID string) *RedisWorkerCoordinator {
	u.t.Helper()
	c := u.coordinator(opts)
	if err := c.Start(context.Background(), workerID, []string{"p"}); err != nil {
		u.t.Fatalf("Start: %v", err)
	}
	return c
}

// advance moves the worker clocks and Redis TTLs together, so time passes for
// both sides as it would in production.
func (u *unit) advance(d time.Duration) {
	u.mr.FastForward(d)
	u.mr.SetTime(u.clock.Now().Add(d))
	u.clock.Advance(d)
}

// liveSlot returns a slot later than the epoch of any state made before
// the call (for tests whose state was lost, a restarted server, where the
// slots before the loss are refused), once it is near enough to be granted:
// a slot more than the lease-ahead bound after the server's time is
// refused. It waits for that, under a second.
func liveSlot() int64 {
	now := time.Now()
	s := now.Unix() + 1
	if time.Unix(s, 0).Sub(now) < 300*time.Millisecond {
		s++
	}
	time.Sleep(time.Until(time.Unix(s, 0).Add(-200 * time.Millisecond)))
	return s
}

// nearSlot waits until the slot s is near enough to be granted (within
// the lease-ahead bound of the server's clock, which is this machine's),
// and returns s.
func nearSlot(s int64) int64 {
	time.Sleep(time.Until(time.Unix(s, 0).Add(-200 * time.Millisecond)))
	return s
}

// slotRun is the run number of the slot starting at the Unix second s, and
// passes RunNumberAuto and RunNumberOnce on as they are.
func slotRun(s int64) int64 {
	if s > 0 {
		return runtime.SlotRunUnix(s)
	}
	return s
}

// mustAcquire acquires and fails the test unless it worked; run is a slot's
// Unix second, RunNumberAuto or RunNumberOnce.
func mustAcquire(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, run int64) runtime.Lease {
	t.Helper()
	return mustAcquireRun(t, c, pipelineID, slotRun(run))
}

// mustAcquireRun is mustAcquire for a run number as the runtime makes it
// (a slot run, a counted run, RunNumberAuto or RunNumberOnce).
func mustAcquireRun(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, run int64) runtime.Lease {
	t.Helper()
	ok, err := c.TryAcquireLease(context.Background(), pipelineID, run)
	if err != nil || !ok {
		t.Fatalf("TryAcquireLease(%q, %d) = %v, %v; want true, nil", pipelineID, run, ok, err)
	}
	lease, held := c.CurrentLease(pipelineID)
	if !held {
		t.Fatalf("CurrentLease(%q) not held after acquiring", pipelineID)
	}
	return lease
}

// lostRecorder records lost-lease callbacks.
type lostRecorder struct {
	mu     sync.Mutex
	leases []runtime.Lease
	ch     chan runtime.Lease
}

func recordLost(c *RedisWorkerCoordinator) *lostRecorder {
	r := &lostRecorder{ch: make(chan runtime.Lease, 100)}
	c.SetLeaseLostCallback(func(pipelineID string, lease runtime.Lease) {
		if pipelineID != lease.PipelineID {
			panic("callback pipeline id differs from the lease's")
		}
		r.mu.Lock()
		r.leases = append(r.leases, lease)
		r.mu.Unlock()
		r.ch <- lease
	})
	return r
}

func (r *lostRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.leases)
}

// waitUntil polls cond in real time, for effects of background goroutines.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// timersPerCoordinator is how many timers a started coordinator keeps
// pending while idle: the renewal and the heartbeat loop.
const timersPerCoordinator = 2

// step waits until n timers are pending (the loops are asleep), moves time by
// d on both sides, and waits until the loops are asleep again.
func (u *unit) step(n int, d time.Duration) {
	u.t.Helper()
	if !u.clock.WaitForTimers(n, 5*time.Second) {
		u.t.Fatalf("only %d timers pending, want %d", u.clock.Pending(), n)
	}
	u.advance(d)
	if !u.clock.WaitForTimers(n, 5*time.Second) {
		u.t.Fatalf("loops did not go back to sleep: %d timers pending, want %d", u.clock.Pending(), n)
	}
}

// stepToNextTimer moves time to the next pending timer's deadline.
func (u *unit) stepToNextTimer(n int) {
	u.t.Helper()
	if !u.clock.WaitForTimers(n, 5*time.Second) {
		u.t.Fatalf("only %d timers pending, want %d", u.clock.Pending(), n)
	}
	next, ok := u.clock.NextDeadline()
	if !ok {
		u.t.Fatal("no timer pending")
	}
	u.step(n, next.Sub(u.clock.Now()))
}

// contextCancelled returns an already cancelled context, as a shutdown
// hands out.
func contextCancelled() (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	return c, cancel
}
