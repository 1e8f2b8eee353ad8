package distributed

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestStartRegistersAndHeartbeatsKeepTheRecord(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.HeartbeatInterval = 5 * time.Second
	a := u.coordinator(opts)
	if err := a.Start(ctx, "worker-a", []string{"orders", "events"}); err != nil {
		t.Fatal(err)
	}
	workers, err := a.ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(workers) != 1 {
		t.Fatalf("ListWorkers = %v", workers)
	}
	w := workers[0]
	host, _ := os.Hostname()
	if w.ID != "worker-a" || w.Host != host || w.PID != os.Getpid() || len(w.Pipelines) != 2 ||
		w.Pipelines[0] != "orders" || !w.StartedAt.Equal(testStart) || !w.LastHeartbeat.Equal(testStart) || w.Version == "" {
		t.Fatalf("record = %+v", w)
	}
	if ttl := u.mr.TTL("agora:distributed:worker:worker-a"); ttl != 15*time.Second {
		t.Fatalf("record TTL = %s, want 3×heartbeat = 15s", ttl)
	}

	// renewal every 5 s (heartbeat bounds it): the record lives on for
	// many expiry periods.
	for i := 0; i < 12; i++ {
		u.step(timersPerCoordinator, 5*time.Second)
	}
	workers, err = a.ListWorkers(ctx)
	if err != nil || len(workers) != 1 {
		t.Fatalf("after 60 s: %v, %v", workers, err)
	}
	if want := testStart.Add(60 * time.Second); !workers[0].LastHeartbeat.Equal(want) {
		t.Errorf("LastHeartbeat = %s, want %s", workers[0].LastHeartbeat, want)
	}
}

func TestDeadWorkerRecordExpires(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.HeartbeatInterval = 5 * time.Second
	a := u.started(opts, "a")
	u.started(opts, "b")
	// a and b stall: no heartbeat for three intervals.
	u.mr.FastForward(15 * time.Second)
	workers, err := a.ListWorkers(ctx)
	if err != nil || len(workers) != 0 {
		t.Fatalf("ListWorkers = %v, %v; want none", workers, err)
	}
}

func TestListWorkersFindsManyWithSCAN(t *testing.T) {
	u := newUnit(t)
	inspector := u.coordinator(u.options())
	const n = 250 // more than one SCAN page
	for i := 0; i < n; i++ {
		u.started(u.options(), workerName(i))
	}
	if err := inspector.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	workers, err := inspector.ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(workers) != n {
		t.Fatalf("found %d workers, want %d", len(workers), n)
	}
	for i := 1; i < len(workers); i++ {
		if workers[i-1].ID >= workers[i].ID {
			t.Fatalf("not sorted: %s before %s", workers[i-1].ID, workers[i].ID)
		}
	}
	if _, err := inspector.TryAcquireLease(ctx, "p", slotRun(1)); !errors.Is(err, ErrNotStarted) {
		t.Errorf("connect-only TryAcquireLease: %v, want ErrNotStarted", err)
	}
}

func workerName(i int) string {
	return "w-" + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + "-" + string(rune('0'+i/676))
}

func TestKeyPrefixesDoNotInterfere(t *testing.T) {
	u := newUnit(t)
	mk := func(prefix, id string) *RedisWorkerCoordinator {
		o := u.options()
		o.KeyPrefix = prefix
		return u.started(o, id)
	}
	a := mk("shop:", "a")
	b := mk("shop*:", "b") // a glob character must not match "shop:" keys
	c := mk("billing:", "c")

	la := mustAcquire(t, a, "p", 100)
	u.mr.SetTime(testStart.Add(time.Second)) // so the two namespaces' tokens differ
	lb := mustAcquire(t, b, "p", 100)
	mustAcquire(t, c, "p", 100)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.ValidateLease(ctx, "p", la.FencingToken); ok {
		t.Error("prefix shop*: sees shop:'s token")
	}
	if ok, _ := b.ValidateLease(ctx, "p", lb.FencingToken); !ok {
		t.Error("completing under shop: touched shop*:'s lease")
	}
	if err := b.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, c, "p", 100) // its slot was never completed under billing:

	for _, tt := range []struct {
		c    *RedisWorkerCoordinator
		want string
	}{{a, "a"}, {b, "b"}, {c, "c"}} {
		ws, err := tt.c.ListWorkers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != 1 || ws[0].ID != tt.want {
			t.Errorf("prefix %q lists %v, want only %s", tt.c.s.KeyPrefix, ws, tt.want)
		}
	}
}

// Rule: a worker id with a control character is quoted where a worker is
// described, so it cannot forge a log line.
func TestWorkerInfoStringQuotesControlCharacters(t *testing.T) {
	w := WorkerInfo{ID: "w1\nfake line", Host: "h", PID: 7, Pipelines: []string{"p"}}
	if got := w.String(); !strings.HasPrefix(got, `"w1\nfake line" (host h, pid 7`) {
		t.Fatalf("String() = %q", got)
	}
	if got := (WorkerInfo{ID: "w1", Host: "h"}).String(); !strings.HasPrefix(got, "w1 (host h") {
		t.Fatalf("String() = %q, want a plain id unquoted", got)
	}
}
