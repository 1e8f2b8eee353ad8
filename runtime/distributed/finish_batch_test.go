package distributed

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestFinishBatcherSendsWhatQueuedMeanwhileTogether(t *testing.T) {
	var (
		mu      sync.Mutex
		batches [][]string
	)
	gate := make(chan struct{})
	first := true
	b := &finishBatcher{timeout: time.Second, send: func(_ context.Context, reqs []finishReq) []finishRep {
		mu.Lock()
		ids := make([]string, len(reqs))
		for i, r := range reqs {
			ids[i] = r.ref.PipelineID
		}
		batches = append(batches, ids)
		wait := first
		first = false
		mu.Unlock()
		if wait {
			<-gate // the first round trip is slow; the others queue behind it
		}
		out := make([]finishRep, len(reqs))
		for i, r := range reqs {
			out[i].owned = r.ref.PipelineID != "gone"
		}
		return out
	}}
	got := make(chan finishRep, 20)
	go func() { got <- b.do(finishReq{ref: leaseRef{PipelineID: "lead"}}) }()
	waitUntil(t, 5*time.Second, "the first send", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(batches) == 1
	})
	for i := range 10 {
		id := fmt.Sprintf("p%d", i)
		if i == 3 {
			id = "gone"
		}
		go func() { got <- b.do(finishReq{ref: leaseRef{PipelineID: id}, completed: true}) }()
	}
	waitUntil(t, 5*time.Second, "ten queued", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queue) == 10
	})
	close(gate)
	owned := 0
	for range 11 {
		if r := <-got; r.owned {
			owned++
		}
	}
	if owned != 10 {
		t.Errorf("%d replies owned, want 10 (one was gone)", owned)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 2 || len(batches[0]) != 1 || len(batches[1]) != 10 {
		t.Fatalf("batches %v; want the first alone, then the ten queued meanwhile in one", batches)
	}
	if b.busy || len(b.queue) != 0 {
		t.Fatal("batcher not idle after the last batch")
	}
}

func TestConcurrentCompletionsShareRoundTrips(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(time.Minute), "a")
	hook := &tripCounter{}
	c.client.AddHook(hook)
	const n = 64
	for i := range n {
		mustAcquire(t, c, fmt.Sprintf("p%d", i), 100)
	}
	trips, _ := hook.measure(func() {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.CompleteLease(ctx, fmt.Sprintf("p%d", i)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	})
	t.Logf("%d completions in %d round trips", n, trips)
	if trips >= n {
		t.Errorf("%d completions took %d round trips; want them batched", n, trips)
	}
	b := r.started(r.options(time.Minute), "b")
	for i := range n {
		if ok, err := b.TryAcquireLease(ctx, fmt.Sprintf("p%d", i), slotRun(100)); ok || err != runtime.ErrSlotCompleted {
			t.Fatalf("p%d slot 100 after completion: %v, %v; want ErrSlotCompleted", i, ok, err)
		}
	}
}
