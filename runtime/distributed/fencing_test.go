package distributed

import (
	"errors"
	"testing"
	"time"
)

func TestValidateLease(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	first := mustAcquire(t, a, "p", 1)
	if ok, err := b.ValidateLease(ctx, "p", first.FencingToken); !ok || err != nil {
		t.Fatalf("current token: %v, %v", ok, err)
	}
	for _, token := range []int64{first.FencingToken - 1, first.FencingToken + 1, 0, -1} {
		if ok, err := b.ValidateLease(ctx, "p", token); ok || err != nil {
			t.Errorf("token %d: %v, %v; want false", token, ok, err)
		}
	}
	if ok, err := b.ValidateLease(ctx, "other", first.FencingToken); ok || err != nil {
		t.Errorf("other pipeline: %v, %v", ok, err)
	}
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.ValidateLease(ctx, "p", first.FencingToken); ok {
		t.Error("released token still valid")
	}
	second := mustAcquire(t, b, "p", 2)
	u.mr.FastForward(31 * time.Second)
	if ok, _ := a.ValidateLease(ctx, "p", second.FencingToken); ok {
		t.Error("expired token still valid")
	}

	u.mr.SetError("ERR down")
	if ok, err := a.ValidateLease(ctx, "p", second.FencingToken); ok || err == nil {
		t.Errorf("Redis failing: %v, %v; want false and an error", ok, err)
	}
}

func TestFencingKeyTTLExpiresIdleKeys(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.FencingKeyTTL = time.Hour
	a := u.started(opts, "a")
	mustAcquire(t, a, "p", 100)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"agora:distributed:token:{p}", "agora:distributed:completed:{p}"} {
		if ttl := u.mr.TTL(key); ttl != time.Hour {
			t.Errorf("TTL of %s = %s, want 1h", key, ttl)
		}
	}
	// Time passes for the worker too: its heartbeat keeps its record.
	u.advance(time.Hour)
	if u.mr.Exists("agora:distributed:token:{p}") || u.mr.Exists("agora:distributed:completed:{p}") {
		t.Fatal("idle counter or completed slot kept")
	}
	// Tokens keep increasing after the counter expired: Redis time moved on.
	u.mr.SetTime(testStart.Add(time.Hour))
	lease := mustAcquire(t, a, "p", 200)
	if lease.FencingToken <= testStart.UnixMicro() {
		t.Fatalf("token %d after expiry not above the earlier ones", lease.FencingToken)
	}
	// A refused attempt leaves the counter, and its expiry, in place.
	c := u.started(opts, "c")
	if ok, err := c.TryAcquireLease(ctx, "p", slotRun(300)); ok || err != nil {
		t.Fatalf("second holder: %v, %v", ok, err)
	}
	if ttl := u.mr.TTL("agora:distributed:token:{p}"); ttl != time.Hour {
		t.Errorf("counter TTL after a refused attempt = %s, want 1h", ttl)
	}

	// Without FencingKeyTTL the keys stay.
	b := u.started(u.options(), "b")
	mustAcquire(t, b, "q", 100)
	if ttl := u.mr.TTL("agora:distributed:token:{q}"); ttl != 0 {
		t.Errorf("counter TTL = %s without FencingKeyTTL, want none", ttl)
	}
}

func TestValidateWorksWithConnectOnly(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	lease := mustAcquire(t, a, "p", 1)
	inspector := u.coordinator(u.options())
	if err := inspector.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := inspector.ValidateLease(ctx, "p", lease.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease after Connect: %v, %v", ok, err)
	}
	if err := inspector.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := inspector.ValidateLease(ctx, "p", lease.FencingToken); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}
