package distributed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

var ctx = context.Background()

func TestAcquireGrantsOneHolderAndFillsTheLease(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "worker-a")
	b := u.started(u.options(), "worker-b")

	lease := mustAcquire(t, a, "orders", 1_772_366_400)
	if lease.PipelineID != "orders" || lease.WorkerID != "worker-a" || lease.RunNumber != 1_772_366_400 {
		t.Errorf("lease = %+v", lease)
	}
	if !lease.Fenced() {
		t.Errorf("lease token %d is not a real fencing token", lease.FencingToken)
	}
	if !lease.AcquiredAt.Equal(testStart) || !lease.ExpiresAt.Equal(testStart.Add(30*time.Second)) {
		t.Errorf("AcquiredAt %s ExpiresAt %s, want now and now+TTL", lease.AcquiredAt, lease.ExpiresAt)
	}
	if ok, err := b.TryAcquireLease(ctx, "orders", slotRun(1_772_366_400)); ok || err != nil {
		t.Fatalf("second worker: %v, %v; want false, nil", ok, err)
	}
	if ok, err := a.TryAcquireLease(ctx, "orders", slotRun(1_772_366_460)); ok || err != nil {
		t.Fatalf("holder asking again: %v, %v; want false, nil", ok, err)
	}
	if _, held := b.CurrentLease("orders"); held {
		t.Error("CurrentLease true on the worker that was refused")
	}
	// Another pipeline is independent.
	mustAcquire(t, b, "invoices", 1_772_366_400)

	held, _ := u.mr.List("agora:distributed:lease:{orders}")
	if len(held) != 1 {
		t.Fatalf("lease list %q, want one value", held)
	}
	stored := held[0]
	if want := fmt.Sprintf("%d 1772366400 worker-a#", lease.FencingToken); !strings.HasPrefix(stored, want) || len(stored) != len(want)+16 {
		t.Errorf("stored lease %q, want %q plus a 16-digit hex suffix", stored, want)
	}
	if ttl := u.mr.TTL("agora:distributed:lease:{orders}"); ttl != 30*time.Second {
		t.Errorf("lease TTL in Redis = %s, want 30s", ttl)
	}
}

func TestTokensStrictlyIncreaseOver1000Cycles(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	var last int64
	for i := 0; i < 1000; i++ {
		c := a
		if i%2 == 1 {
			c = b
		}
		lease := mustAcquire(t, c, "p", runtime.RunNumberAuto)
		if lease.FencingToken <= last {
			t.Fatalf("cycle %d: token %d not above %d", i, lease.FencingToken, last)
		}
		if lease.RunNumber != lease.FencingToken {
			t.Fatalf("Auto run number %d differs from token %d", lease.RunNumber, lease.FencingToken)
		}
		last = lease.FencingToken
		if err := c.ReleaseLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTokensSeedFromRedisTimeAndSurviveALostCounter(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	first := mustAcquire(t, a, "p", runtime.RunNumberAuto).FencingToken
	if want := testStart.UnixMicro(); first != want {
		t.Fatalf("first token = %d, want the Redis time in µs %d", first, want)
	}
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}

	// The counter is lost (expiry, restart, failover); Redis time has moved
	// on by a second, as it has by the time anything notices.
	u.mr.Del("agora:distributed:token:{p}")
	u.mr.SetTime(testStart.Add(time.Second))
	second := mustAcquire(t, a, "p", runtime.RunNumberAuto).FencingToken
	if second <= first {
		t.Fatalf("token after losing the counter = %d, not above %d", second, first)
	}
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}

	// The server clock set back while the counter survives: last+1 wins.
	u.mr.SetTime(testStart.Add(-time.Hour))
	third := mustAcquire(t, a, "p", runtime.RunNumberAuto).FencingToken
	if third != second+1 {
		t.Fatalf("token with a clock set back = %d, want %d", third, second+1)
	}
}

func TestRefusedAcquireLeavesTheCounterAlone(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	first := mustAcquire(t, a, "p", runtime.RunNumberAuto).FencingToken

	// Refused attempts, whatever their mode and however late, must not move
	// the counter: only granted leases do (fencing.go).
	u.mr.SetTime(testStart.Add(time.Minute))
	for _, run := range []int64{runtime.RunNumberAuto, runtime.RunNumberOnce, 42} {
		if ok, err := b.TryAcquireLease(ctx, "p", slotRun(run)); ok || err != nil {
			t.Fatalf("run %d while held: %v, %v; want false, nil", run, ok, err)
		}
	}
	if got, _ := u.mr.Get("agora:distributed:token:{p}"); got != fmt.Sprint(first, " ", first) {
		t.Fatalf("counter after refused attempts = %s, want %d and its run (the token)", got, first)
	}
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if second := mustAcquire(t, b, "p", runtime.RunNumberAuto).FencingToken; second != testStart.Add(time.Minute).UnixMicro() {
		t.Fatalf("next token = %d, want the Redis time %d", second, testStart.Add(time.Minute).UnixMicro())
	}
}

func TestTokensIncreaseWhenTheCounterIsStale(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	var tokens []int64
	for i := 0; i < 3; i++ {
		u.mr.SetTime(testStart.Add(time.Duration(i) * time.Second))
		tokens = append(tokens, mustAcquire(t, a, "p", runtime.RunNumberAuto).FencingToken)
		if err := a.ReleaseLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	// A failover to a replica that missed the last writes, or a restart from
	// an older AOF or RDB file: the counter is there, but behind the tokens
	// already handed out.
	if err := u.mr.Set("agora:distributed:token:{p}", fmt.Sprint(tokens[0])); err != nil {
		t.Fatal(err)
	}
	u.mr.SetTime(testStart.Add(3 * time.Second))
	if next := mustAcquire(t, a, "p", runtime.RunNumberAuto).FencingToken; next <= tokens[2] {
		t.Fatalf("token after a stale counter = %d, not above the last one handed out %d", next, tokens[2])
	}
}

func TestCompletedSlotIsNeverLeasedAgain(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	const slot = 1_772_366_340 // a minute before the server's time

	mustAcquire(t, a, "p", slot)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*RedisWorkerCoordinator{a, b} {
		for _, run := range []int64{slot, slot - 60} {
			ok, err := c.TryAcquireLease(ctx, "p", slotRun(run))
			if ok || !errors.Is(err, runtime.ErrSlotCompleted) {
				t.Fatalf("slot %d after completion: %v, %v; want false, ErrSlotCompleted", run, ok, err)
			}
		}
	}
	if got, _ := u.mr.ZScore("agora:distributed:completed:{p}", "slot"); got != slot {
		t.Fatalf("completed-slot record = %v", got)
	}
	// The next slot is fine, and other pipelines are not affected.
	mustAcquire(t, b, "p", slot+60)
	mustAcquire(t, a, "q", slot)
	if st := a.Status().(CoordinatorStatus); st.SlotCompleted != 2 {
		t.Errorf("SlotCompleted = %d, want 2", st.SlotCompleted)
	}
}

func TestReleasedSlotCanBeTakenOver(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	first := mustAcquire(t, a, "p", 500)
	// A failed run releases without completing: another replica may retry
	// the slot.
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	second := mustAcquire(t, b, "p", 500)
	if second.FencingToken <= first.FencingToken {
		t.Fatalf("takeover token %d not above %d", second.FencingToken, first.FencingToken)
	}
	if u.mr.Exists("agora:distributed:completed:{p}") {
		t.Fatal("a release recorded the slot as completed")
	}
}

func TestRunNumberAutoHasNoSlotRule(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	for i := 0; i < 3; i++ {
		mustAcquire(t, a, "consumer", runtime.RunNumberAuto)
		if err := a.CompleteLease(ctx, "consumer"); err != nil {
			t.Fatal(err)
		}
	}
	if u.mr.Exists("agora:distributed:completed:{consumer}") || u.mr.Exists("agora:distributed:once:{consumer}") {
		t.Fatal("an Auto run recorded a slot")
	}
}

func TestOnceRunsOnOneReplicaUntilTheMarkerExpires(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")

	lease := mustAcquire(t, a, "migrate", runtime.RunNumberOnce)
	if lease.RunNumber != lease.FencingToken {
		t.Errorf("Once run number %d, want the token %d", lease.RunNumber, lease.FencingToken)
	}
	if ok, err := b.TryAcquireLease(ctx, "migrate", runtime.RunNumberOnce); ok || err != nil {
		t.Fatalf("while running elsewhere: %v, %v; want false, nil", ok, err)
	}
	if err := a.CompleteLease(ctx, "migrate"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*RedisWorkerCoordinator{a, b} {
		if ok, err := c.TryAcquireLease(ctx, "migrate", runtime.RunNumberOnce); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
			t.Fatalf("after completion: %v, %v; want false, ErrSlotCompleted", ok, err)
		}
	}
	if ttl := u.mr.TTL("agora:distributed:once:{migrate}"); ttl != 60*time.Second {
		t.Fatalf("once marker TTL = %s, want 2×LeaseTTL = 60s", ttl)
	}
	u.mr.FastForward(60 * time.Second)
	mustAcquire(t, b, "migrate", runtime.RunNumberOnce)
}

func TestFailedOnceRunCanBeRetried(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	mustAcquire(t, a, "migrate", runtime.RunNumberOnce)
	if err := a.ReleaseLease(ctx, "migrate"); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, b, "migrate", runtime.RunNumberOnce)
}

func TestOwnLeftoverLeaseIsTakenWithANewToken(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	req := leaseRequest{PipelineID: "p", Owner: a.owner, Worker: "a", RecordKey: a.recordKey, Mode: 42}
	// The first reply is lost (a retried command): the lease sits in Redis
	// under this owner although the worker never learnt of it.
	first, err := a.backend.acquire(ctx, req)
	if err != nil || first.Outcome != outcomeAcquired {
		t.Fatalf("first acquire: %+v, %v", first, err)
	}
	u.mr.SetTime(testStart.Add(time.Millisecond))
	lease := mustAcquire(t, a, "p", 42)
	if lease.FencingToken <= first.Token {
		t.Fatalf("retaken token %d not above %d", lease.FencingToken, first.Token)
	}
	if ok, _ := a.ValidateLease(ctx, "p", first.Token); ok {
		t.Fatal("the lost reply's token is still valid")
	}
	// Another owner still cannot take it.
	b := u.started(u.options(), "b")
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(42)); ok || err != nil {
		t.Fatalf("other worker: %v, %v", ok, err)
	}
}

func TestAcquireArgumentErrors(t *testing.T) {
	u := newUnit(t)
	c := u.coordinator(u.options())
	if _, err := c.TryAcquireLease(ctx, "p", slotRun(1)); !errors.Is(err, ErrNotStarted) {
		t.Errorf("before Start: %v, want ErrNotStarted", err)
	}
	if err := c.Start(ctx, "w", []string{"p"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, "w", nil); !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("second Start: %v, want ErrAlreadyStarted", err)
	}
	if _, err := c.TryAcquireLease(ctx, "", slotRun(1)); err == nil {
		t.Error("empty pipeline id accepted")
	}
	if _, err := c.TryAcquireLease(ctx, "p", -2); !errors.Is(err, ErrInvalidRunNumber) {
		t.Errorf("run -2: %v, want ErrInvalidRunNumber", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryAcquireLease(ctx, "p", slotRun(1)); !errors.Is(err, ErrNotStarted) {
		t.Errorf("after Stop: %v, want ErrNotStarted", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryAcquireLease(ctx, "p", slotRun(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	if err := c.Start(ctx, "w", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	d := u.coordinator(u.options())
	if err := d.Start(ctx, "", nil); err == nil {
		t.Error("empty worker id accepted")
	}
	if err := d.Start(ctx, "w", []string{""}); err == nil {
		t.Error("empty pipeline id accepted by Start")
	}
}

func TestCancelledContextIsNotARedisFailure(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.FallbackToLocal = true
	a := u.started(opts, "a")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	ok, err := a.TryAcquireLease(cctx, "p", slotRun(1))
	if ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, %v; want false, context.Canceled", ok, err)
	}
	if st := a.Status().(CoordinatorStatus); st.FallbackLeases != 0 {
		t.Fatal("a cancelled call fell back to a local lease")
	}
}
