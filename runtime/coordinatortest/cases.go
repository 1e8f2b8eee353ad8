package coordinatortest

import (
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// cases lists the contract, the lease rules first, then the capabilities.
func (s suite) cases() []testCase {
	return append([]testCase{
		{name: "GrantCarriesWhatWasAskedFor", run: testGrant},
		{name: "ExclusiveOnOneWorker", run: testExclusiveOnOneWorker},
		{name: "ReleasedSlotAskedAgain", run: testReleased},
		{name: "CompletedSlotRefused", run: testCompleted},
		{name: "CompletedOnceRefused", run: testOnce},
		{name: "AutoNumbersIncrease", run: testAuto},
		{name: "CountedRunsAreNoSlots", run: testCounted},
		{name: "TokensIncrease", run: testTokens},
		{name: "Renew", run: testRenew},
		{name: "ReleaseWithoutLease", run: testReleaseNotHeld},
		{name: "StopGivesLeasesBack", run: testStop},
		{name: "LeaseLost", needsLose: true, run: testLost},
		{name: "FleetExclusive", fleet: true, run: testFleetExclusive},
		{name: "FleetCompletedSlotRefused", fleet: true, run: testFleetCompleted},
		{name: "FleetCountedExclusive", fleet: true, run: testFleetCounted},
		{name: "FleetRace", fleet: true, run: testFleetRace},
		{name: "FleetStopGivesLeasesBack", fleet: true, run: testFleetStop},
		{name: "FleetLeaseLost", fleet: true, needsLose: true, run: testFleetLost},
	}, capabilityCases()...)
}

func testGrant(t *testing.T, f *fleet) {
	w := f.worker("p")
	w.mustAcquire("p", f.slot(0))
	w.release("p")
	w.mustAcquire("p", runtime.RunNumberOnce)
	w.release("p")
	w.mustAcquire("p", runtime.RunNumberAuto)
}

// A worker holding a pipeline's lease is refused another, whatever run it
// asks for, and other pipelines are not affected.
func testExclusiveOnOneWorker(t *testing.T, f *fleet) {
	w := f.worker("p", "q")
	lease := w.mustAcquire("p", f.slot(0))
	w.mustRefuse("p", f.slot(0))
	w.mustRefuse("p", f.slot(1))
	w.mustRefuse("p", runtime.RunNumberAuto)
	w.mustAcquire("q", f.slot(0))
	if now, held := w.c.CurrentLease("p"); !held || now.FencingToken != lease.FencingToken || now.RunNumber != lease.RunNumber {
		t.Fatalf("refused requests changed the lease held: %+v, want %+v", now, lease)
	}
}

// A released slot did not complete: it may be asked for again.
func testReleased(t *testing.T, f *fleet) {
	w := f.worker("p")
	first := w.mustAcquire("p", f.slot(0))
	w.release("p")
	if !f.s.cfg.unfenced {
		w.mustNotValidate("p", first.FencingToken)
	}
	w.mustAcquire("p", f.slot(0))
	w.release("p")
}

// A completed slot is refused with ErrSlotCompleted, and so is every slot
// before it; later slots are granted.
func testCompleted(t *testing.T, f *fleet) {
	w := f.worker("p")
	w.mustAcquire("p", f.slot(5))
	w.complete("p")
	w.mustRefuseDone("p", f.slot(5))
	w.mustRefuseDone("p", f.slot(4))
	w.mustAcquire("p", f.slot(6))
	w.release("p")
	// A failed later slot does not lower the mark.
	w.mustRefuseDone("p", f.slot(5))
	w.mustAcquire("p", f.slot(6))
}

// A completed Once run is refused for good; a released one is not.
func testOnce(t *testing.T, f *fleet) {
	w := f.worker("p")
	w.mustAcquire("p", runtime.RunNumberOnce)
	w.release("p")
	w.mustAcquire("p", runtime.RunNumberOnce)
	w.complete("p")
	w.mustRefuseDone("p", runtime.RunNumberOnce)
}

// RunNumberAuto numbers runs increasingly, and a completed auto run does
// not make a slot look completed.
func testAuto(t *testing.T, f *fleet) {
	w := f.worker("p")
	var last int64
	for i := range 3 {
		lease := w.mustAcquire("p", runtime.RunNumberAuto)
		if lease.RunNumber <= last {
			t.Fatalf("auto run %d numbered %d, not above the one before, %d", i, lease.RunNumber, last)
		}
		last = lease.RunNumber
		w.complete("p")
	}
	w.mustAcquire("p", f.slot(0))
}

// A counted run (the caller's own number, such as the reference's
// run_number=42) carries its number and is no slot: completing it marks
// nothing, so the same number and smaller ones are granted again, and a
// completed slot refuses no counted run. Tokens still rise (mustAcquire).
func testCounted(t *testing.T, f *fleet) {
	w := f.worker("p")
	for _, n := range []int64{42, 42, 1, runtime.CountedRun(7)} {
		w.mustAcquire("p", n)
		w.complete("p")
	}
	w.mustAcquire("p", f.slot(5))
	w.complete("p")
	w.mustAcquire("p", 3)
	w.complete("p")
	w.mustRefuseDone("p", f.slot(5)) // and the counted run lowered no mark
	w.mustAcquire("p", f.slot(6))
}

// Every grant of a pipeline carries a greater token than the grants
// before it, whatever ended them (checked by mustAcquire).
func testTokens(t *testing.T, f *fleet) {
	w := f.worker("p")
	for i := range 6 {
		w.mustAcquire("p", f.slot(i))
		if i%2 == 0 {
			w.complete("p")
		} else {
			w.release("p")
		}
	}
	w.mustAcquire("p", runtime.RunNumberAuto)
}

// Renewing a held lease keeps it; renewing none fails.
func testRenew(t *testing.T, f *fleet) {
	w := f.worker("p", "q")
	lease := w.mustAcquire("p", f.slot(0))
	if err := w.c.RenewLease(ctx(t), "p"); err != nil {
		t.Fatalf("RenewLease of a held lease: %v", err)
	}
	now, held := w.c.CurrentLease("p")
	if !held || now.FencingToken != lease.FencingToken || now.RunNumber != lease.RunNumber {
		t.Fatalf("after RenewLease the lease is %+v (held %v); want %+v", now, held, lease)
	}
	if !now.ExpiresAt.IsZero() && now.ExpiresAt.Before(lease.ExpiresAt) {
		t.Errorf("RenewLease moved the expiry back: %v, was %v", now.ExpiresAt, lease.ExpiresAt)
	}
	if err := w.c.RenewLease(ctx(t), "q"); err == nil {
		t.Error("RenewLease of a lease never acquired succeeded")
	}
	w.release("p")
	if err := w.c.RenewLease(ctx(t), "p"); err == nil {
		t.Error("RenewLease of a released lease succeeded")
	}
	if len(w.lost) != 0 {
		t.Errorf("the lost-lease callback ran for a lease given back: %+v", <-w.lost)
	}
}

// Giving back a lease not held changes nothing (it may say so with an
// error).
func testReleaseNotHeld(t *testing.T, f *fleet) {
	w := f.worker("p")
	_ = w.c.ReleaseLease(ctx(t), "p")
	_ = w.c.CompleteLease(ctx(t), "p")
	w.mustNotHold("p")
	w.mustAcquire("p", f.slot(0))
}

// Stop gives back every lease held.
func testStop(t *testing.T, f *fleet) {
	w := f.worker("p", "q")
	w.mustAcquire("p", f.slot(0))
	w.mustAcquire("q", runtime.RunNumberAuto)
	w.stop()
	w.mustNotHold("p")
	w.mustNotHold("q")
}

// A lost lease is reported once, through the callback or the renewal that
// finds it gone, and no longer validates; the pipeline can be leased again.
func testLost(t *testing.T, f *fleet) {
	w := f.worker("p")
	lease := w.mustAcquire("p", f.slot(0))
	f.s.cfg.lose(t, w.c, "p")
	renewErr := w.c.RenewLease(ctx(t), "p")
	if renewErr == nil {
		t.Fatal("RenewLease of a lost lease succeeded")
	}
	w.mustNotHold("p")
	w.mustNotValidate("p", lease.FencingToken)
	w.mustReportLost(lease)
	w.mustAcquire("p", f.slot(1))
}

// lostWait bounds the wait for a lost-lease callback that a coordinator
// runs from a goroutine of its own; one that runs it inline answers at once.
const lostWait = 5 * time.Second

// mustReportLost fails the test unless the lost-lease callback ran once,
// with lease.
func (w *worker) mustReportLost(lease runtime.Lease) {
	w.t.Helper()
	timer := time.NewTimer(lostWait)
	defer timer.Stop()
	select {
	case got := <-w.lost:
		if got.FencingToken != lease.FencingToken || got.RunNumber != lease.RunNumber {
			w.t.Errorf("%s: lost-lease callback with %+v; want the lease lost, %+v", w.id, got, lease)
		}
	case <-timer.C:
		w.t.Fatalf("%s: the lost-lease callback did not run", w.id)
	}
	if len(w.lost) != 0 {
		w.t.Errorf("%s: the lost-lease callback ran again: %+v", w.id, <-w.lost)
	}
}
