package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// batchCoord is a fakeCoord that also decides lease requests in batches,
// counting the batches and the requests made one by one.
type batchCoord struct {
	*fakeCoord
	singles atomic.Int64
	mu      sync.Mutex
	batches []int
}

func (c *batchCoord) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.BatchLeaser = c
	return caps
}

func (c *batchCoord) TryAcquireLease(ctx context.Context, id string, n int64) (bool, error) {
	c.singles.Add(1)
	return c.fakeCoord.TryAcquireLease(ctx, id, n)
}

func (c *batchCoord) TryAcquireLeases(ctx context.Context, reqs []runtime.LeaseRequest) []runtime.LeaseReply {
	c.mu.Lock()
	c.batches = append(c.batches, len(reqs))
	c.mu.Unlock()
	out := make([]runtime.LeaseReply, len(reqs))
	for i, r := range reqs {
		out[i].Acquired, out[i].Err = c.fakeCoord.TryAcquireLease(ctx, r.PipelineID, r.RunNumber)
	}
	return out
}

func (c *batchCoord) batchSizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.batches...)
}

func TestBurstAsksForLeasesInBatches(t *testing.T) {
	const n = 300
	clock := clocktest.NewFake(t0)
	coord := &batchCoord{fakeCoord: newFakeCoord()}
	// Every third pipeline is held elsewhere.
	coord.decide = func(id string, _ int64) (bool, error) { return !strings.HasSuffix(id, "-held"), nil }
	var runs atomic.Int64
	ran := map[string]int64{}
	var mu sync.Mutex
	var sps []*runtime.ScheduledPipeline
	for i := range n {
		id := fmt.Sprintf("p%d", i)
		if i%3 == 0 {
			id += "-held"
		}
		sps = append(sps, &runtime.ScheduledPipeline{PipelineID: id, Schedule: runtime.MustCron("* * * * * *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					lease, ok := runtime.LeaseFromContext(ctx)
					if !ok || lease.FencingToken == 0 {
						t.Errorf("%s ran without its lease", id)
					}
					mu.Lock()
					ran[id] = lease.RunNumber
					mu.Unlock()
					runs.Add(1)
					return nil
				}), nil
			}})
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, sps...)
	advanceTo(t, clock, d, t0.Add(time.Second))
	if got := runs.Load(); got != n-n/3 {
		t.Fatalf("%d runs, want %d (the pipelines not held elsewhere)", got, n-n/3)
	}
	slot := t0.Add(time.Second).Unix()
	mu.Lock()
	for id, run := range ran {
		if run != slot || strings.HasSuffix(id, "-held") {
			t.Errorf("%s ran slot %d, want %d and never a held one", id, run, slot)
		}
	}
	mu.Unlock()
	if s := coord.singles.Load(); s != 0 {
		t.Errorf("%d lease requests made one by one; want every one in a batch", s)
	}
	total, sizes := 0, coord.batchSizes()
	for _, s := range sizes {
		total += s
	}
	if total != n || len(sizes) > n/64 {
		t.Errorf("batches %v: %d requests in %d batches; want all %d in a few", sizes, total, len(sizes), n)
	}
	for _, st := range d.pool.Status().Pipelines {
		if strings.HasSuffix(st.PipelineID, "-held") && st.Skipped == 0 {
			t.Errorf("%s: refused attempt not counted as skipped: %+v", st.PipelineID, st)
			break
		}
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// slowBatchCoord answers lease batches only after a pause, so a stop can
// come while one is in flight.
type slowBatchCoord struct {
	*batchCoord
	asked chan struct{}
	once  sync.Once
}

func (c *slowBatchCoord) Capabilities() runtime.Capabilities {
	caps := c.batchCoord.Capabilities()
	caps.BatchLeaser = c
	return caps
}

func (c *slowBatchCoord) TryAcquireLeases(ctx context.Context, reqs []runtime.LeaseRequest) []runtime.LeaseReply {
	c.once.Do(func() { close(c.asked) })
	time.Sleep(50 * time.Millisecond)
	return c.batchCoord.TryAcquireLeases(ctx, reqs)
}

func TestStopWhileALeaseBatchIsInFlight(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := &slowBatchCoord{batchCoord: &batchCoord{fakeCoord: newFakeCoord()}, asked: make(chan struct{})}
	var sps []*runtime.ScheduledPipeline
	for i := range 300 {
		sps = append(sps, &runtime.ScheduledPipeline{PipelineID: fmt.Sprintf("p%d", i), Schedule: runtime.MustCron("* * * * * *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
			}})
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, sps...)
	// Started comes before the dispatcher has gone to sleep: moving the
	// clock first would leave its timer set a second after the move.
	if !clock.WaitForTimers(1, 5*time.Second) {
		t.Fatal("the dispatcher set no timer")
	}
	clock.Set(t0.Add(time.Second))
	waitClosed(t, coord.asked, "a lease batch in flight")
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// deferCoord is a batchCoord that defers the requests of pipelines it
// expects another worker to take, and records when each request came.
type deferCoord struct {
	*batchCoord
	clock  *clocktest.Fake
	defers map[string]time.Duration
	mu     sync.Mutex
	asked  map[string]time.Time
}

func (c *deferCoord) Capabilities() runtime.Capabilities {
	caps := c.batchCoord.Capabilities()
	caps.BatchLeaser, caps.LeaseDeferrer = c, c
	return caps
}

func (c *deferCoord) DeferLease(req runtime.LeaseRequest) time.Duration {
	return c.defers[req.PipelineID]
}

func (c *deferCoord) TryAcquireLease(ctx context.Context, id string, n int64) (bool, error) {
	c.mu.Lock()
	c.asked[id] = c.clock.Now()
	c.mu.Unlock()
	return c.batchCoord.TryAcquireLease(ctx, id, n)
}

func (c *deferCoord) TryAcquireLeases(ctx context.Context, reqs []runtime.LeaseRequest) []runtime.LeaseReply {
	c.mu.Lock()
	for _, r := range reqs {
		c.asked[r.PipelineID] = c.clock.Now()
	}
	c.mu.Unlock()
	return c.batchCoord.TryAcquireLeases(ctx, reqs)
}

// TestDeferredLeaseRequestsAreAskedAfterTheirDelay: of a batch due
// together, the requests a LeaseDeferrer defers are sent after their delay
// (those due again together in one batch), and the others at once; a
// deferred request the coordinator grants still runs its slot, that much
// later, and one it refuses is skipped.
func TestDeferredLeaseRequestsAreAskedAfterTheirDelay(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := &deferCoord{batchCoord: &batchCoord{fakeCoord: newFakeCoord()}, clock: clock,
		defers: map[string]time.Duration{"later": 200 * time.Millisecond, "later-held": 300 * time.Millisecond},
		asked:  map[string]time.Time{}}
	coord.decide = func(id string, _ int64) (bool, error) { return !strings.HasSuffix(id, "-held"), nil }
	var mu sync.Mutex
	ran := map[string]time.Time{}
	var sps []*runtime.ScheduledPipeline
	for _, id := range []string{"now-a", "now-b", "later", "later-held"} {
		sps = append(sps, &runtime.ScheduledPipeline{PipelineID: id, Schedule: runtime.MustCron("* * * * * *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					lease, _ := runtime.LeaseFromContext(ctx)
					mu.Lock()
					ran[id] = clock.Now()
					mu.Unlock()
					if lease.RunNumber != t0.Add(time.Second).Unix() {
						t.Errorf("%s ran run %d, want the slot", id, lease.RunNumber)
					}
					return nil
				}), nil
			}})
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, sps...)
	slot := t0.Add(time.Second)
	advanceTo(t, clock, d, slot.Add(100*time.Millisecond))
	mu.Lock()
	if len(ran) != 2 || ran["now-a"].IsZero() || ran["now-b"].IsZero() {
		t.Fatalf("runs by 100 ms after the slot: %v; want now-a and now-b only", ran)
	}
	mu.Unlock()
	advanceTo(t, clock, d, slot.Add(500*time.Millisecond))
	coord.mu.Lock()
	for id, want := range map[string]time.Duration{"now-a": 0, "now-b": 0, "later": 200 * time.Millisecond, "later-held": 300 * time.Millisecond} {
		if got := coord.asked[id].Sub(slot); got < want || got > want+50*time.Millisecond {
			t.Errorf("%s asked %v after its slot, want %v", id, got, want)
		}
	}
	coord.mu.Unlock()
	mu.Lock()
	if got := ran["later"].Sub(slot); got < 200*time.Millisecond {
		t.Errorf("deferred later ran %v after its slot, want after the delay", got)
	}
	if _, ok := ran["later-held"]; ok {
		t.Error("a deferred request the coordinator refused ran")
	}
	mu.Unlock()
	// The two asked at once went in one batch; each deferred one came due
	// alone and asked alone.
	if sizes := coord.batchSizes(); len(sizes) != 1 || sizes[0] != 2 || coord.singles.Load() != 2 {
		t.Errorf("batches %v and %d single requests, want [2] and 2", sizes, coord.singles.Load())
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
