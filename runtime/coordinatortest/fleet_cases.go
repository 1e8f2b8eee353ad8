package coordinatortest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// Two workers never hold one pipeline's lease at once; once it is given
// back the other gets it, with a greater token, and the first one's token
// no longer validates anywhere.
func testFleetExclusive(t *testing.T, f *fleet) {
	a, b := f.worker("p", "q"), f.worker("p", "q")
	first := a.mustAcquire("p", f.slot(0))
	b.mustRefuse("p", f.slot(0))
	b.mustRefuse("p", f.slot(1))
	b.mustRefuse("p", runtime.RunNumberAuto)
	b.mustNotHold("p")
	b.mustAcquire("q", f.slot(0))
	a.mustRefuse("q", f.slot(0))
	a.release("p")
	b.mustAcquireSoon("p", f.slot(0))
	a.mustNotValidate("p", first.FencingToken)
	b.mustNotValidate("p", first.FencingToken)
}

// A slot one worker completed is refused to every other.
func testFleetCompleted(t *testing.T, f *fleet) {
	a, b := f.worker("p"), f.worker("p")
	a.mustAcquire("p", f.slot(3))
	a.complete("p")
	b.mustRefuseDone("p", f.slot(3))
	b.mustRefuseDone("p", f.slot(2))
	b.mustAcquire("p", runtime.RunNumberOnce)
	b.complete("p")
	a.mustRefuseDone("p", runtime.RunNumberOnce)
	a.mustAcquire("p", f.slot(4))
}

// Workers asking for the same slots at once: each slot of each pipeline is
// granted to exactly one of them.
func testFleetRace(t *testing.T, f *fleet) {
	const pipelines = 8
	ids := make([]string, pipelines)
	for i := range ids {
		ids[i] = fmt.Sprintf("race-%d", i)
	}
	workers := []*worker{f.worker(ids...), f.worker(ids...), f.worker(ids...)}
	var mu sync.Mutex
	winners := map[string][]string{}
	var errs []error
	var wg sync.WaitGroup
	for _, w := range workers {
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := w.acquire(id, f.slot(0))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %s: %w", w.id, id, err))
				}
				if ok {
					winners[id] = append(winners[id], w.id)
				}
			}()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if len(winners[id]) != 1 {
			t.Errorf("%s granted to %v; want exactly one worker", id, winners[id])
		}
	}
	for _, w := range workers {
		for _, id := range ids {
			l, held := w.c.CurrentLease(id)
			if held != (len(winners[id]) == 1 && winners[id][0] == w.id) {
				t.Errorf("%s: CurrentLease(%q) held %v (%+v); granted to %v", w.id, id, held, l, winners[id])
			}
		}
	}
}

// A stopped worker's leases are free for the others (at once, or within
// moments: see freeWait).
func testFleetStop(t *testing.T, f *fleet) {
	a, b := f.worker("p", "q"), f.worker("p", "q")
	a.mustAcquire("p", f.slot(0))
	a.mustAcquire("q", runtime.RunNumberAuto)
	a.stop()
	b.mustAcquireSoon("p", f.slot(0))
	b.mustAcquireSoon("q", runtime.RunNumberAuto)
}

// A lease lost by one worker is reported to it and can go to another.
func testFleetLost(t *testing.T, f *fleet) {
	a, b := f.worker("p"), f.worker("p")
	lease := a.mustAcquire("p", f.slot(0))
	f.s.cfg.lose(t, a.c, "p")
	b.mustAcquireSoon("p", f.slot(0))
	if err := a.c.RenewLease(ctx(t), "p"); err == nil {
		t.Fatal("RenewLease of a lease lost to another worker succeeded")
	}
	a.mustNotHold("p")
	a.mustNotValidate("p", lease.FencingToken)
	a.mustReportLost(lease)
}

// A counted run has one holder across the fleet, whatever number each
// worker asks for, and the next holder's token is above the last one's.
func testFleetCounted(t *testing.T, f *fleet) {
	a, b := f.worker("p"), f.worker("p")
	a.mustAcquire("p", 42)
	b.mustRefuse("p", 42)
	b.mustRefuse("p", 43)
	b.mustNotHold("p")
	a.release("p")
	b.mustAcquireSoon("p", 43)
	a.mustRefuse("p", 44)
	b.release("p")
	a.mustAcquireSoon("p", 5)
}
