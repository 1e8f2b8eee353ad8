package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

func TestLocalCoordinatorSlotRules(t *testing.T) {
	ctx := context.Background()
	c := runtime.NewLocalCoordinator(clocktest.NewFake(t0))
	if err := c.Start(ctx, "w", []string{"p"}); err != nil {
		t.Fatal(err)
	}
	// n is a slot's second, or RunNumberAuto or RunNumberOnce.
	mustAcquire := func(id string, n int64, want bool, wantErr error) {
		t.Helper()
		ok, err := c.TryAcquireLease(ctx, id, seam(n))
		if ok != want || !errors.Is(err, wantErr) {
			t.Fatalf("TryAcquireLease(%q, %d) = %v, %v; want %v, %v", id, n, ok, err, want, wantErr)
		}
	}
	mustAcquire("p", 100, true, nil)
	l, held := c.CurrentLease("p")
	if !held || l.RunNumber != 100 || l.WorkerID != "w" || l.FencingToken != 0 || !l.AcquiredAt.Equal(t0) {
		t.Fatalf("lease %+v held=%v", l, held)
	}
	mustAcquire("p", 200, false, nil) // held: one run at a time
	if ok, _ := c.ValidateLease(ctx, "p", 0); !ok {
		t.Fatal("held lease does not validate")
	}
	if err := c.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	mustAcquire("p", 100, true, nil) // released, not completed: may retry
	if err := c.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	mustAcquire("p", 100, false, runtime.ErrSlotCompleted)
	mustAcquire("p", 50, false, runtime.ErrSlotCompleted)
	mustAcquire("p", 101, true, nil)
	c.ReleaseLease(ctx, "p")
	if err := c.RenewLease(ctx, "p"); !errors.Is(err, runtime.ErrLeaseNotHeld) {
		t.Fatalf("renew without lease = %v", err)
	}

	// Auto numbers count up and never block slots.
	for want := int64(1); want <= 3; want++ {
		mustAcquire("auto", runtime.RunNumberAuto, true, nil)
		if l, _ := c.CurrentLease("auto"); l.RunNumber != want {
			t.Fatalf("auto number %d, want %d", l.RunNumber, want)
		}
		c.CompleteLease(ctx, "auto")
	}
	mustAcquire("auto", 2, true, nil)
	c.ReleaseLease(ctx, "auto")

	// Once: refused after completion, not after a failure.
	mustAcquire("once", runtime.RunNumberOnce, true, nil)
	c.ReleaseLease(ctx, "once")
	mustAcquire("once", runtime.RunNumberOnce, true, nil)
	c.CompleteLease(ctx, "once")
	mustAcquire("once", runtime.RunNumberOnce, false, runtime.ErrSlotCompleted)

	if _, err := c.TryAcquireLease(ctx, "bad", -7); err == nil {
		t.Fatal("negative run number other than RunNumberOnce accepted")
	}
	if err := c.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquire("p", 300, true, nil)
	if st := c.Status().(runtime.LocalCoordinatorStatus); st.Kind != "local" || st.HeldLeases != 1 {
		t.Fatalf("status %+v", st)
	}
	c.Stop(ctx)
	if _, held := c.CurrentLease("p"); held {
		t.Fatal("Stop kept a lease")
	}
}

func TestLocalCoordinatorConcurrentAcquireIsExclusive(t *testing.T) {
	ctx := context.Background()
	c := runtime.NewLocalCoordinator(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _ := c.TryAcquireLease(ctx, "p", 42); ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
}

func TestLocalLeaseSlotMarksScheduledRuns(t *testing.T) {
	c := runtime.NewLocalCoordinator(clocktest.NewFake(t0))
	for _, tc := range []struct {
		run  int64
		slot bool
	}{{runtime.SlotRunUnix(1767225600), true}, {42, false}, {runtime.RunNumberAuto, false}, {runtime.RunNumberOnce, false}} {
		if ok, err := c.TryAcquireLease(context.Background(), "p", tc.run); !ok || err != nil {
			t.Fatalf("run %d: %v %v", tc.run, ok, err)
		}
		if l, _ := c.CurrentLease("p"); l.Slot != tc.slot {
			t.Errorf("run %d: lease %+v, want Slot %v", tc.run, l, tc.slot)
		}
		if err := c.ReleaseLease(context.Background(), "p"); err != nil {
			t.Fatal(err)
		}
	}
}

// seam is the run number the pool asks for: a slot's second as a slot.
func seam(n int64) int64 {
	if n > 0 {
		return runtime.SlotRunUnix(n)
	}
	return n
}

// A counted run holds the lease like any other, marks nothing completed,
// and is not refused by a completed slot.
func TestLocalCoordinatorCountedRuns(t *testing.T) {
	ctx := context.Background()
	c := runtime.NewLocalCoordinator(clocktest.NewFake(t0))
	for _, n := range []int64{42, 42, 7} {
		if ok, err := c.TryAcquireLease(ctx, "p", n); !ok || err != nil {
			t.Fatalf("counted run %d: %v, %v", n, ok, err)
		}
		if l, _ := c.CurrentLease("p"); l.RunNumber != n || l.Slot {
			t.Fatalf("counted run %d: lease %+v", n, l)
		}
		if ok, _ := c.TryAcquireLease(ctx, "p", n+1); ok {
			t.Fatal("a second counted run granted while the first holds the lease")
		}
		if err := c.CompleteLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := c.TryAcquireLease(ctx, "p", runtime.SlotRunUnix(50)); !ok || err != nil {
		t.Fatalf("slot 50 after counted runs up to 42: %v, %v; want granted", ok, err)
	}
	_ = c.CompleteLease(ctx, "p")
	if ok, err := c.TryAcquireLease(ctx, "p", 3); !ok || err != nil {
		t.Fatalf("counted run 3 after slot 50 completed: %v, %v; want granted", ok, err)
	}
}
