package distributed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestFailSafeRefusesLeasesWithoutRedisAndRecovers(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	if err := a.Healthy(ctx); err != nil {
		t.Fatalf("Healthy with Redis up: %v", err)
	}
	u.mr.Close()

	ok, err := a.TryAcquireLease(ctx, "p", slotRun(1))
	if ok || err == nil || errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("without Redis: %v, %v; want false and the cause", ok, err)
	}
	if !strings.Contains(err.Error(), `acquire lease of "p"`) {
		t.Errorf("error %q does not say what failed", err)
	}
	if _, held := a.CurrentLease("p"); held {
		t.Fatal("a lease is held without Redis")
	}
	if err := a.Healthy(ctx); err == nil {
		t.Fatal("Healthy = nil without Redis; readiness must fail")
	}
	st := a.Status().(CoordinatorStatus)
	if st.Reachable || st.LastError == "" || st.FallbackLeases != 0 {
		t.Errorf("status without Redis: %+v", st)
	}
	if n := u.logs.count("distributed: Redis unreachable"); n != 1 {
		t.Errorf("logged the outage %d times, want once", n)
	}

	// The client reconnects by itself (go-redis re-dials in the background
	// about once a second).
	if err := u.mr.Restart(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "an acquire after Redis came back", func() bool {
		ok, _ := a.TryAcquireLease(ctx, "p", slotRun(1))
		return ok
	})
	if err := a.Healthy(ctx); err != nil {
		t.Fatalf("Healthy after Redis came back: %v", err)
	}
	if !a.Status().(CoordinatorStatus).Reachable {
		t.Error("status still unreachable")
	}
	if u.logs.count("distributed: Redis reachable again") != 1 {
		t.Error("recovery not logged")
	}
}

func TestFallbackToLocalGrantsUnfencedLeases(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.FallbackToLocal = true
	a := u.started(opts, "a")
	u.mr.SetError("LOADING Redis is loading the dataset in memory")

	lease := mustAcquire(t, a, "p", 100)
	if lease.FencingToken != 0 || lease.Fenced() || lease.RunNumber != 100 || lease.WorkerID != "a" {
		t.Fatalf("fallback lease = %+v, want unfenced, run 100", lease)
	}
	if ok, err := a.TryAcquireLease(ctx, "p", slotRun(100)); ok || err != nil {
		t.Fatalf("second local acquire while held: %v, %v", ok, err)
	}
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	// The slot rule still holds within the process.
	if ok, err := a.TryAcquireLease(ctx, "p", slotRun(100)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("completed local slot: %v, %v", ok, err)
	}
	mustAcquire(t, a, "p", 160)
	if err := a.RenewLease(ctx, "p"); err != nil {
		t.Fatalf("RenewLease of a local lease: %v", err)
	}
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}

	auto1 := mustAcquire(t, a, "c", runtime.RunNumberAuto)
	_ = a.ReleaseLease(ctx, "c")
	auto2 := mustAcquire(t, a, "c", runtime.RunNumberAuto)
	if auto1.RunNumber <= 0 || auto2.RunNumber <= auto1.RunNumber || auto2.FencingToken != 0 {
		t.Errorf("local Auto runs %+v then %+v", auto1, auto2)
	}
	_ = a.CompleteLease(ctx, "c")

	mustAcquire(t, a, "once", runtime.RunNumberOnce)
	_ = a.CompleteLease(ctx, "once")
	if ok, err := a.TryAcquireLease(ctx, "once", runtime.RunNumberOnce); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("completed local Once: %v, %v", ok, err)
	}

	st := a.Status().(CoordinatorStatus)
	if st.FallbackLeases != 5 {
		t.Errorf("FallbackLeases = %d, want 5", st.FallbackLeases)
	}
	if n := u.logs.count("unfenced local lease (FallbackToLocal)"); n != 5 {
		t.Errorf("fallback warnings = %d, want one per fallback lease (5)", n)
	}
	if !strings.Contains(u.logs.String(), "level=WARN") {
		t.Error("fallback not logged as a warning")
	}
	if err := a.Healthy(ctx); err != nil {
		t.Errorf("Healthy with fallback: %v; a worker that can run is ready", err)
	}
	if ok, _ := a.ValidateLease(ctx, "p", 0); ok {
		t.Error("token 0 validated")
	}

	// Back to Redis: real, fenced leases again.
	u.mr.SetError("")
	if got := mustAcquire(t, a, "p", 220); !got.Fenced() {
		t.Fatalf("lease after Redis returned is unfenced: %+v", got)
	}
}

func TestFallbackLeasesAreNotRenewedOrLost(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.FallbackToLocal = true
	a := u.started(opts, "a")
	lost := recordLost(a)
	u.mr.SetError("ERR down")
	mustAcquire(t, a, "p", 1)
	for i := 0; i < 10; i++ {
		u.stepToNextTimer(timersPerCoordinator)
	}
	if lost.count() != 0 {
		t.Fatal("a local lease was reported lost")
	}
	if _, held := a.CurrentLease("p"); !held {
		t.Fatal("local lease dropped")
	}
}
