package distributed

import (
	"errors"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// The reference's direct sample counts its runs (TryAcquireLease(ctx,
// "daily-orders", 42)): against a real redis-server restarted empty
// between two acquisitions, a counted run is granted again, with a token
// above every earlier one, while a slot asked for before the loss is still
// refused as possibly run.

// acquireRunEventually asks for run until it is granted (the first requests
// after a restart may meet a broken connection), failing after 10 s.
func acquireRunEventually(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, run int64) runtime.Lease {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := c.TryAcquireLease(ctx, pipelineID, run)
		if ok {
			lease, held := c.CurrentLease(pipelineID)
			if !held {
				t.Fatalf("run %d of %q granted but not held", run, pipelineID)
			}
			return lease
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %d of %q never granted within 10 s (last error: %v)", run, pipelineID, last)
	return runtime.Lease{}
}

func TestCountedRunsAcquireAgainAfterAnEmptyRestart(t *testing.T) {
	r := newReal(t)
	c := startCoordinator(t, r.options(stateLossTTL), "reference", []string{"daily-orders"})
	var top int64
	for run := int64(1); run <= 5; run++ {
		lease := mustAcquireCounted(t, c, "daily-orders", run)
		if lease.FencingToken <= top {
			t.Fatalf("run %d: token %d not above %d", run, lease.FencingToken, top)
		}
		top = lease.FencingToken
		finish := c.ReleaseLease
		if run%2 == 0 {
			finish = c.CompleteLease // completing a counted run marks nothing
		}
		if err := finish(ctx, "daily-orders"); err != nil {
			t.Fatal(err)
		}
	}
	// A slot that began before the loss, as a control: the slot rules
	// still hold for slots.
	slot := thisSlot()
	mustAcquire(t, c, "slot-control", slot)
	if err := c.ReleaseLease(ctx, "slot-control"); err != nil {
		t.Fatal(err)
	}

	r.srv.Restart()
	lease := acquireRunEventually(t, c, "daily-orders", 100)
	if lease.RunNumber != 100 || lease.Slot {
		t.Errorf("lease after the restart: run %d, slot %v; want counted run 100", lease.RunNumber, lease.Slot)
	}
	if lease.FencingToken <= top {
		t.Errorf("token after the empty restart %d; want above every earlier one (%d)", lease.FencingToken, top)
	}
	t.Logf("runs 1..5 up to token %d; after the empty restart run 100 got token %d", top, lease.FencingToken)
	if err := c.ReleaseLease(ctx, "daily-orders"); err != nil {
		t.Fatal(err)
	}
	// The same counted number again, and a smaller one: no slot rule.
	again := mustAcquireCounted(t, c, "daily-orders", 100)
	if again.FencingToken <= lease.FencingToken {
		t.Errorf("token %d not above %d", again.FencingToken, lease.FencingToken)
	}
	if ok, err := c.TryAcquireLease(ctx, "slot-control", slotRun(slot)); ok || !errors.Is(err, ErrStateLost) {
		t.Errorf("slot %d, begun before the loss, after it: %v, %v; want refused with ErrStateLost", slot, ok, err)
	}
}

// mustAcquireCounted is mustAcquire for a counted run: the lease carries
// the number and is no slot.
func mustAcquireCounted(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, run int64) runtime.Lease {
	t.Helper()
	ok, err := c.TryAcquireLease(ctx, pipelineID, run)
	if !ok || err != nil {
		t.Fatalf("TryAcquireLease(%q, %d) = %v, %v; want true, nil", pipelineID, run, ok, err)
	}
	lease, held := c.CurrentLease(pipelineID)
	if !held || lease.RunNumber != run || lease.Slot {
		t.Fatalf("lease of counted run %d: %+v (held %v)", run, lease, held)
	}
	return lease
}

// The same on a Redlock quorum whose primary (the token counter) restarts
// empty.
func TestCountedRunsAcquireAgainAfterAnEmptyRedlockPrimaryRestart(t *testing.T) {
	rig := newQuorumRig(t, 3)
	c := rig.started(rig.options(stateLossTTL), "reference")
	var top int64
	for run := int64(1); run <= 5; run++ {
		top = mustAcquireCounted(t, c, "p", run).FencingToken
		if err := c.CompleteLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	rig.primary.Restart()
	lease := acquireRunEventually(t, c, "p", 100)
	if lease.RunNumber != 100 || lease.Slot || lease.FencingToken <= top {
		t.Errorf("after the restart: run %d slot %v token %d; want counted run 100 with a token above %d", lease.RunNumber, lease.Slot, lease.FencingToken, top)
	}
}

func TestInvalidRunNumbersAreRefused(t *testing.T) {
	u := newUnit(t)
	c := u.started(u.options(), "w")
	for _, run := range []int64{-2, 1 << 62} {
		if ok, err := c.TryAcquireLease(ctx, "p", run); ok || !errors.Is(err, ErrInvalidRunNumber) {
			t.Errorf("run %d: %v, %v; want ErrInvalidRunNumber", run, ok, err)
		}
	}
}
