package engine

import (
	"testing"
	"time"
)

// burstDispatcher returns a dispatcher with n runners due at due, without
// starting its loop.
func burstDispatcher(clock Clock, n int, due int64) *dispatcher {
	d := newDispatcher(clock, nil, n)
	_, d.precise = clock.(systemClock)
	for range n {
		d.heap.push(due, &Runner{inHeap: true})
	}
	d.heap.push(due+int64(time.Second), &Runner{inHeap: true})
	return d
}

func TestDueHeapCountDue(t *testing.T) {
	var h dueHeap
	for i := range 1000 {
		h.push(int64(i%4), &Runner{}) // 250 entries each at 0, 1, 2, 3
	}
	if got := h.countDue(0, 0, 1000); got != 250 {
		t.Fatalf("countDue(0) = %d, want 250", got)
	}
	if got := h.countDue(0, 0, 100); got != 100 {
		t.Fatalf("countDue(0) with limit 100 = %d, want 100", got)
	}
	h.push(-1, &Runner{})
	if got := h.countDue(0, -1, 1000); got != 1 {
		t.Fatalf("countDue(-1) = %d, want 1", got)
	}
}

func TestPrepareBurstOnlyForLargeBatchesOnTheSystemClock(t *testing.T) {
	now := time.Now().UnixNano()
	due := now + int64(2*time.Millisecond)

	fake := burstDispatcher(&steppingClock{t: time.Unix(0, now)}, burstSize, due)
	if fake.prepareBurstLocked(due, now) {
		t.Fatal("a fake clock must keep plain timers")
	}
	small := burstDispatcher(systemClock{}, burstSize-1, due)
	if small.prepareBurstLocked(due, now) {
		t.Fatalf("a batch of %d must keep the plain timer", burstSize-1)
	}
	if small.executors.Load() != 0 {
		t.Fatal("no executor may be started for a small batch")
	}

	want := int64(min(preciseDispatcher(1).procs-1, maxWarm))

	// With no executors yet, the ones to warm are started. They take their
	// warm-up requests as soon as they run, so the queue may already be
	// drained; the executor count is what the test can rely on.
	d := burstDispatcher(systemClock{}, burstSize, due)
	if !d.prepareBurstLocked(due, now) {
		t.Fatalf("a batch of %d must be spun for", burstSize)
	}
	if d.executors.Load() != want || int64(len(d.work)) > want {
		t.Fatalf("started %d executors and queued %d requests, want %d of each at most", d.executors.Load(), len(d.work), want)
	}
	close(d.work) // let the warmed executors exit

	// With idle executors counted but none running, the warm-up requests
	// stay queued, once per batch.
	idle := burstDispatcher(systemClock{}, burstSize, due)
	idle.executors.Store(want)
	if !idle.prepareBurstLocked(due, now) {
		t.Fatalf("a batch of %d must be spun for", burstSize)
	}
	if got := int64(len(idle.work)); got != want || idle.executors.Load() != want {
		t.Fatalf("queued %d warm-up requests for %d executors, want %d for %d", got, idle.executors.Load(), want, want)
	}
	idle.prepareBurstLocked(due, now)
	if got := int64(len(idle.work)); got != want {
		t.Fatalf("warm-up requests went from %d to %d for the same batch", want, got)
	}
}

func TestPrepareBurstKeepsToTheSpinBudget(t *testing.T) {
	now := time.Now().UnixNano()
	d := burstDispatcher(systemClock{}, burstSize, now)
	spun := 0
	for i := range 1000 {
		due := now + int64(i)*int64(10*time.Microsecond) + int64(drainLead)
		d.heap[0].due = due // the top batch moves on, still large
		for j := 1; j < burstSize; j++ {
			d.heap[j].due = due
		}
		if d.prepareBurstLocked(due, now+int64(i)*int64(10*time.Microsecond)) {
			spun++
		}
	}
	// 1000 batches inside 10 ms of wall time, each asking for drainLead on
	// every processor: only the budget's worth may be granted.
	if maxSpins := int(spinBudget/(drainLead*time.Duration(d.procs))) + 1; spun == 0 || spun > maxSpins {
		t.Fatalf("spun for %d batches, want 1..%d", spun, maxSpins)
	}
	close(d.work)
}

func TestSpinToStopsOnQuit(t *testing.T) {
	d := preciseDispatcher(1)
	close(d.quit)
	start := time.Now()
	if d.spinTo(time.Now().Add(time.Hour).UnixNano()) {
		t.Fatal("spinTo must report a stop")
	}
	if took := time.Since(start); took > maxSpin {
		t.Fatalf("spinTo took %v after quit", took)
	}
	d2 := preciseDispatcher(1)
	far := time.Now().Add(time.Hour).UnixNano()
	start = time.Now()
	if !d2.spinTo(far) {
		t.Fatal("spinTo reported a stop that was not asked")
	}
	if took := time.Since(start); took < maxSpin || took > maxSpin+50*time.Millisecond {
		t.Fatalf("spinTo to a far due time took %v, want about maxSpin %v", took, maxSpin)
	}
}
