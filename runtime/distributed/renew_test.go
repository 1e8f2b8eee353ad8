package distributed

import (
	"errors"
	"testing"
	"time"
)

func TestRenewalKeepsALeasePastSeveralTTLs(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	lost := recordLost(a)
	lease := mustAcquire(t, a, "p", 7)

	// 5 TTLs, in steps of the renewal interval (TTL/3).
	for i := 0; i < 15; i++ {
		u.step(2*timersPerCoordinator, 10*time.Second)
	}
	if lost.count() != 0 {
		t.Fatalf("lease lost %d times while Redis was fine", lost.count())
	}
	if ok, err := a.ValidateLease(ctx, "p", lease.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease after 5 TTLs = %v, %v", ok, err)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(7)); ok || err != nil {
		t.Fatalf("another worker acquired a renewed lease: %v, %v", ok, err)
	}
	now, _ := a.CurrentLease("p")
	if !now.ExpiresAt.After(testStart.Add(150 * time.Second)) {
		t.Errorf("ExpiresAt %s not moved forward by renewal", now.ExpiresAt)
	}
	if now.FencingToken != lease.FencingToken {
		t.Errorf("renewal changed the token from %d to %d", lease.FencingToken, now.FencingToken)
	}
}

func TestLeaseTakenOverIsLostOnceAtTheNextRenewal(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	lost := recordLost(a)
	old := mustAcquire(t, a, "p", 7)

	// a stalls (its clock does not move, so it does not renew) while Redis
	// time passes the TTL; b takes over.
	u.clock.WaitForTimers(2*timersPerCoordinator, 5*time.Second)
	u.mr.FastForward(31 * time.Second)
	newer := mustAcquire(t, b, "p", 7)
	if newer.FencingToken <= old.FencingToken {
		t.Fatalf("takeover token %d not above %d", newer.FencingToken, old.FencingToken)
	}

	u.step(2*timersPerCoordinator, 10*time.Second)
	select {
	case got := <-lost.ch:
		if got.FencingToken != old.FencingToken || got.PipelineID != "p" {
			t.Errorf("callback lease = %+v, want the old one", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no lost callback")
	}
	if _, held := a.CurrentLease("p"); held {
		t.Error("lost lease still current")
	}
	for i := 0; i < 3; i++ {
		u.step(2*timersPerCoordinator, 10*time.Second)
	}
	if lost.count() != 1 {
		t.Errorf("lost callback ran %d times, want once", lost.count())
	}
	if ok, _ := a.ValidateLease(ctx, "p", old.FencingToken); ok {
		t.Error("old token still valid")
	}
	if ok, _ := a.ValidateLease(ctx, "p", newer.FencingToken); !ok {
		t.Error("new holder's token not valid")
	}
	if st := a.Status().(CoordinatorStatus); st.Lost != 1 {
		t.Errorf("Status.Lost = %d", st.Lost)
	}
}

func TestRenewalDeadlineGivesTheLeaseUpBeforeTheTTL(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a") // TTL 30s: deadline 20s, renewal every 10s
	lost := recordLost(a)
	mustAcquire(t, a, "p", 7)
	deadline := testStart.Add(20 * time.Second)

	u.mr.SetError("LOADING Redis is loading the dataset in memory")
	for u.clock.Now().Before(deadline) {
		if lost.count() != 0 {
			t.Fatalf("lease given up at %s, before its deadline %s", u.clock.Now(), deadline)
		}
		u.stepToNextTimer(timersPerCoordinator)
	}
	select {
	case <-lost.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no lost callback at the deadline")
	}
	if got := u.clock.Now(); !got.Equal(deadline) {
		t.Errorf("lease given up at %s, want exactly the deadline %s", got, deadline)
	}
	st := a.Status().(CoordinatorStatus)
	if st.RenewalFailures == 0 || st.Reachable {
		t.Errorf("status after failures: %+v", st)
	}
	// Redis itself would have kept it 10 s longer: the margin is the point.
	u.mr.SetError("")
	if ttl := u.mr.TTL("agora:distributed:lease:{p}"); ttl <= 0 {
		t.Errorf("lease already gone in Redis (TTL %s); the local deadline should come first", ttl)
	}
}

func TestRenewalRecoversFromAShortOutage(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	lost := recordLost(a)
	lease := mustAcquire(t, a, "p", 7)
	u.mr.SetError("ERR busy")
	u.step(timersPerCoordinator, 10*time.Second) // renewal fails
	u.mr.SetError("")
	u.stepToNextTimer(timersPerCoordinator) // retried soon after, succeeds
	if lost.count() != 0 {
		t.Fatalf("lease lost after a short outage\n%s", u.logs)
	}
	cur, _ := a.CurrentLease("p")
	if !cur.ExpiresAt.After(lease.ExpiresAt) {
		t.Fatalf("ExpiresAt not extended by the retry: %s", cur.ExpiresAt)
	}
	// The deadline now counts from the successful retry, not from the
	// acquisition: 25 s after acquiring, the lease is still held.
	for u.clock.Now().Before(testStart.Add(25 * time.Second)) {
		u.stepToNextTimer(timersPerCoordinator)
	}
	if lost.count() != 0 {
		t.Fatal("deadline counted from the acquisition instead of the last renewal")
	}
}

func TestRenewLeaseExplicitly(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	lost := recordLost(a)
	mustAcquire(t, a, "p", 7)
	u.mr.FastForward(20 * time.Second)
	if err := a.RenewLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if ttl := u.mr.TTL("agora:distributed:lease:{p}"); ttl != 30*time.Second {
		t.Fatalf("TTL after RenewLease = %s, want 30s", ttl)
	}
	if err := b.RenewLease(ctx, "p"); !errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("non-owner RenewLease: %v, want ErrLeaseNotHeld", err)
	}
	if ttl := u.mr.TTL("agora:distributed:lease:{p}"); ttl != 30*time.Second {
		t.Fatal("non-owner renewal changed the lease")
	}

	u.mr.SetError("ERR down")
	if err := a.RenewLease(ctx, "p"); err == nil || errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("RenewLease with Redis failing: %v, want a transport error", err)
	}
	if _, held := a.CurrentLease("p"); !held || lost.count() != 0 {
		t.Fatal("one failed renewal lost the lease")
	}
	u.mr.SetError("")
	u.mr.FastForward(31 * time.Second)
	if err := a.RenewLease(ctx, "p"); !errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("RenewLease of an expired lease: %v, want ErrLeaseNotHeld", err)
	}
	if lost.count() != 1 {
		t.Fatalf("lost callbacks = %d, want 1", lost.count())
	}
}
