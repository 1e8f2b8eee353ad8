package distributed

import (
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// Lease-ahead's rules (ahead.go), on a real redis-server. The slots are
// whole seconds and the server's clock cannot be injected, so a test that
// needs a grant ahead of a slot waits, at most a second, until the server's
// clock is within the lead before the next one.

func TestAheadScriptLeadIsMaxLeaseAhead(t *testing.T) {
	src := leasebackend.Source(leasebackend.AcquireScript)
	m := regexp.MustCompile(`(?m)^local lead = (\d+)`).FindStringSubmatch(src)
	if m == nil {
		t.Fatal("internal/leasebackend/lua/acquire.lua sets no lead")
	}
	if us, _ := strconv.ParseInt(string(m[1]), 10, 64); us != MaxLeaseAhead.Microseconds() {
		t.Fatalf("acquire.lua lead = %d µs, MaxLeaseAhead = %v", us, MaxLeaseAhead)
	}
}

// aheadSlot waits until the server's clock is between 200 and 100 ms
// before a second's boundary and returns that second: a slot whose lease
// may be granted ahead now, and not yet begun.
func aheadSlot(t *testing.T, admin *redis.Client) int64 {
	t.Helper()
	for range 40 {
		now, err := admin.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		frac := time.Duration(now.Nanosecond())
		switch {
		case frac >= 800*time.Millisecond && frac < 900*time.Millisecond:
			return now.Unix() + 1
		case frac < 800*time.Millisecond:
			time.Sleep(800*time.Millisecond - frac)
		default:
			time.Sleep(time.Second - frac)
		}
	}
	t.Fatal("the server's clock never came within the lead of a boundary")
	return 0
}

// askAhead sends one Ahead request for pipelineID's slot.
func askAhead(c *RedisWorkerCoordinator, pipelineID string, slot int64) runtime.LeaseReply {
	return c.TryAcquireLeases(ctx, []runtime.LeaseRequest{{PipelineID: pipelineID, RunNumber: slotRun(slot), Ahead: true}})[0]
}

func TestAheadGrantIsForItsSlotOnlyAndHeldAgainstOthers(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	// b does not run p, so no view makes either worker defer for it.
	b := startCoordinator(t, r.options(10*time.Second), "b", []string{"q"})
	admin := r.client(0)

	// More than the lead before its slot: decided nothing, nothing written.
	far := time.Now().Unix() + 3
	if rep := askAhead(a, "p", far); rep.Acquired || !errors.Is(rep.Err, runtime.ErrAskAtSlot) {
		t.Fatalf("ahead of slot %d by seconds: %+v; want ErrAskAtSlot", far, rep)
	}
	if n, _ := admin.Exists(ctx, a.keys.lease("p"), a.keys.token("p")).Result(); n != 0 {
		t.Fatalf("a request too early wrote %d keys", n)
	}

	slot := aheadSlot(t, admin)
	rep := askAhead(a, "p", slot)
	if !rep.Acquired || rep.Err != nil {
		t.Fatalf("ahead of slot %d within the lead: %+v; want granted", slot, rep)
	}
	lease, held := a.CurrentLease("p")
	if !held || lease.RunNumber != slot || !lease.Slot {
		t.Fatalf("CurrentLease = %+v, %v; want slot %d", lease, held, slot)
	}
	// Its TTL counts from the grant, not from the boundary.
	if ttl, _ := admin.PTTL(ctx, a.keys.lease("p")).Result(); ttl > 10*time.Second || ttl < 9*time.Second {
		t.Fatalf("lease PTTL = %v; want the TTL from the grant", ttl)
	}
	// Another worker, ahead or at the boundary, is refused as held (a
	// live holder's early grant is never taken over), and so is a later
	// request of its own for the same slot.
	if rep := askAhead(b, "p", slot); rep.Acquired || rep.Err != nil {
		t.Fatalf("b ahead of the held slot: %+v; want held", rep)
	}
	for time.Now().Unix() < slot {
		time.Sleep(10 * time.Millisecond)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(slot)); ok || err != nil {
		t.Fatalf("b at the boundary: %v, %v; want held", ok, err)
	}
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(slot)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("b after completion: %v, %v; want ErrSlotCompleted", ok, err)
	}
}

func TestAheadFindingThePreviousSlotStillRunningAsksAtTheBoundary(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	b := startCoordinator(t, r.options(10*time.Second), "b", []string{"q"}) // no view for p
	slot := aheadSlot(t, r.client(0))
	mustAcquire(t, a, "p", slot-1) // a's run of the previous slot goes on
	if rep := askAhead(b, "p", slot); rep.Acquired || !errors.Is(rep.Err, runtime.ErrAskAtSlot) {
		t.Fatalf("ahead while the previous slot runs elsewhere: %+v; want ErrAskAtSlot", rep)
	}
	// This worker's own run of the previous slot: the same, locally.
	if rep := askAhead(a, "p", slot); rep.Acquired || !errors.Is(rep.Err, runtime.ErrAskAtSlot) {
		t.Fatalf("ahead while its own previous run goes on: %+v; want ErrAskAtSlot", rep)
	}
}

// The epoch rule with lease-ahead: a grant made before a loss of state,
// ahead of its slot, is lost with the state while its holder keeps it; the
// new epoch is a Redis time before the slot. The slot must still be
// refused to everyone else (slot − lead < epoch).
func TestAheadEpochRefusesASlotGrantedAheadBeforeALoss(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	b := startCoordinator(t, r.options(10*time.Second), "b", []string{"q"}) // no view for p
	admin := r.client(0)
	slot := aheadSlot(t, admin)
	if rep := askAhead(a, "p", slot); !rep.Acquired {
		t.Fatalf("ahead: %+v; want granted", rep)
	}
	if err := admin.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// b registers again (the epoch becomes the Redis time now, before the
	// slot) and asks, ahead and at the boundary: both refused as possibly
	// granted in the lost state.
	if rep := askAhead(b, "p", slot); rep.Acquired || !errors.Is(rep.Err, ErrStateLost) {
		t.Fatalf("b ahead after the loss: %+v; want ErrStateLost", rep)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(slot)); ok || !errors.Is(err, ErrStateLost) {
		t.Fatalf("b before the boundary after the loss: %v, %v; want ErrStateLost", ok, err)
	}
	if e, _ := admin.Get(ctx, keysFor(b.s).epoch()).Int64(); e == 0 || e >= slot*1_000_000 {
		t.Fatalf("epoch = %d; the test needs one before the slot %d", e, slot)
	}
	for time.Now().Unix() < slot {
		time.Sleep(10 * time.Millisecond)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(slot)); ok || !errors.Is(err, ErrStateLost) {
		t.Fatalf("b at the boundary after the loss: %v, %v; want ErrStateLost", ok, err)
	}
	// The slot after is granted as usual once it is more than the lead
	// after the epoch.
	mustAcquire(t, b, "p", nearSlot(slot+2))
}

func TestAheadLookOfAWorkerNotPreferredAsksAtOnceOnlyWhenThePreferredIsDead(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	b := r.started(r.options(10*time.Second), "b")
	for _, c := range []*RedisWorkerCoordinator{a, b, a} {
		c.refreshPreference(ctx)
	}
	other, preferred := a, b
	if b.notPreferred("p") {
		other, preferred = b, a
	}
	if !other.notPreferred("p") || preferred.notPreferred("p") {
		t.Fatal("the view names no single preferred worker for p")
	}
	slot := time.Now().Unix() + 2
	// Nothing granted, the preferred worker alive: ask as without
	// lease-ahead (deferred), not at once.
	if rep := askAhead(other, "p", slot); rep.Acquired || rep.Err == nil || errors.Is(rep.Err, runtime.ErrAskAtSlot) {
		t.Fatalf("look with the preferred worker alive: %+v; want an undecided reply other than ErrAskAtSlot", rep)
	}
	// Its record gone (it died and the record expired): ask at once.
	if err := r.client(0).Del(ctx, preferred.recordKey).Err(); err != nil {
		t.Fatal(err)
	}
	if rep := askAhead(other, "p", slot); rep.Acquired || !errors.Is(rep.Err, runtime.ErrAskAtSlot) {
		t.Fatalf("look with the preferred worker's record gone: %+v; want ErrAskAtSlot", rep)
	}
}
