package distributed

import (
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

func TestRecordMargin(t *testing.T) {
	for _, tc := range []struct{ ttl, want time.Duration }{
		{90 * time.Second, 905 * time.Millisecond}, // the default 30 s heartbeat
		{3 * time.Second, 35 * time.Millisecond},
		{6 * time.Millisecond, 3 * time.Millisecond}, // never more than half
	} {
		if got := recordMargin(tc.ttl); got != tc.want {
			t.Errorf("recordMargin(%s) = %s, want %s", tc.ttl, got, tc.want)
		}
	}
}

// takeoverOptions: a 1 s heartbeat under a 30 s TTL, so the record rule
// (give up 2.965 s after the last confirmed refresh) comes long before the
// renewal deadline (20 s).
func takeoverOptions(u *unit) Options {
	o := u.options()
	o.HeartbeatInterval = time.Second
	return o
}

func TestTakeoverOnlyOnceTheHolderRecordIsGone(t *testing.T) {
	u := newUnit(t)
	a := u.started(takeoverOptions(u), "a")
	b := u.started(takeoverOptions(u), "b")
	lost := recordLost(a)
	old := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	if ok, err := b.TryAcquireLease(ctx, "p", runtime.RunNumberAuto); ok || err != nil {
		t.Fatalf("b acquired while a's record is alive: %v, %v", ok, err)
	}

	u.mr.Del("agora:distributed:worker:a") // as if it had expired
	newer := mustAcquire(t, b, "p", runtime.RunNumberAuto)
	if newer.FencingToken <= old.FencingToken {
		t.Fatalf("takeover token %d not above %d", newer.FencingToken, old.FencingToken)
	}
	if ok, _ := b.ValidateLease(ctx, "p", old.FencingToken); ok {
		t.Fatal("the old holder's token still validates")
	}
	// a's next renewal round writes its record again and finds the lease
	// gone.
	if ok, _ := a.renewAll(); !ok {
		t.Fatal("renewal round failed")
	}
	if lost.count() != 1 {
		t.Fatalf("a lost %d leases, want 1", lost.count())
	}
	if !u.mr.Exists("agora:distributed:worker:a") {
		t.Error("a's renewal round did not rewrite its record")
	}
	if ok, _ := b.ValidateLease(ctx, "p", newer.FencingToken); !ok {
		t.Fatal("b's lease disturbed by a's renewal")
	}
}

func TestAcquireWritesAMissingRecordFirst(t *testing.T) {
	u := newUnit(t)
	a := u.started(takeoverOptions(u), "a")
	b := u.started(takeoverOptions(u), "b")
	// The record is gone and no write of it went through lately (Redis was
	// unreachable, say): the grant must find that out.
	u.mr.Del("agora:distributed:worker:a")
	a.mu.Lock()
	a.recordOK = time.Time{}
	a.mu.Unlock()
	mustAcquire(t, a, "p", 5)
	if !u.mr.Exists("agora:distributed:worker:a") {
		t.Fatal("lease granted while the holder has no record: anyone could take it over")
	}
	if ttl := u.mr.TTL("agora:distributed:worker:a"); ttl != 3*time.Second {
		t.Errorf("record TTL %s, want 3×heartbeat", ttl)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(5)); ok || err != nil {
		t.Fatalf("b took the fresh lease: %v, %v", ok, err)
	}
}

func TestHolderGivesUpBeforeItsRecordCanExpire(t *testing.T) {
	u := newUnit(t)
	a := u.started(takeoverOptions(u), "a")
	lost := recordLost(a)
	mustAcquire(t, a, "p", 7)
	giveUp := testStart.Add(3*time.Second - 35*time.Millisecond)

	u.mr.SetError("ERR down") // no renewal or heartbeat goes through
	for u.clock.Now().Before(giveUp) {
		if _, held := a.CurrentLease("p"); !held || lost.count() != 0 {
			t.Fatalf("lease given up at %s, before %s", u.clock.Now(), giveUp)
		}
		u.stepToNextTimer(timersPerCoordinator)
	}
	select {
	case <-lost.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no lost callback at the record deadline")
	}
	if got := u.clock.Now(); !got.Equal(giveUp) {
		t.Errorf("lease given up at %s, want %s: 3×heartbeat less the margin", got, giveUp)
	}
	// Redis still keeps the record (and the lease) a little longer: nobody
	// could have taken over yet.
	u.mr.SetError("")
	if ttl := u.mr.TTL("agora:distributed:worker:a"); ttl <= 0 {
		t.Errorf("record already gone (TTL %s) when the holder gave up", ttl)
	}
}

func TestGrantRefreshesTheRecordOnlyWhenNoRecentWrite(t *testing.T) {
	r := newReal(t)
	opts := r.options(30 * time.Second)
	opts.HeartbeatInterval = time.Second
	a := r.started(opts, "a") // Start wrote the record just now
	admin := r.client(0)
	pexpires := func() int64 {
		info, err := admin.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		return redistest.ParseCommandStats(info)["pexpire"].Calls
	}
	before := pexpires()
	mustAcquire(t, a, "p", runtime.RunNumberAuto)
	if n := pexpires() - before; n != 1 {
		t.Errorf("grant right after a record write ran %d PEXPIREs, want 1 (the lease's)", n)
	}
	a.mu.Lock()
	a.recordOK = a.recordOK.Add(-2 * time.Second) // as if the last write were older
	a.mu.Unlock()
	before = pexpires()
	mustAcquire(t, a, "q", runtime.RunNumberAuto)
	if n := pexpires() - before; n != 2 {
		t.Errorf("grant after a stale record write ran %d PEXPIREs, want 2 (record and lease)", n)
	}
	lease, _ := a.CurrentLease("q")
	a.mu.Lock()
	deadline := a.leases["q"].deadline
	a.mu.Unlock()
	if want := lease.AcquiredAt.Add(3*time.Second - 35*time.Millisecond); !deadline.Equal(want) {
		t.Errorf("deadline %s, want %s: the record rule from the grant's send", deadline, want)
	}
}
