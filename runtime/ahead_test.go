package runtime_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// aheadCoord is a controlCoord that decides batches, grants leases ahead
// of their slots (runtime.LeaseAheader) and records when each request came
// and whether it was sent ahead.
type aheadCoord struct {
	*controlCoord
	clock  *clocktest.Fake
	defer_ time.Duration // DeferLease's answer for every slot request
	// ahead, when set, answers the Ahead requests instead of a grant.
	ahead func(id string, n int64) runtime.LeaseReply
	amu   sync.Mutex
	asked []aheadAsk
}

func (c *aheadCoord) Capabilities() runtime.Capabilities {
	caps := c.controlCoord.Capabilities()
	caps.BatchLeaser, caps.LeaseDeferrer, caps.LeaseAheader = c, c, c
	return caps
}

type aheadAsk struct {
	at    time.Time
	run   int64
	ahead bool
}

var (
	_ runtime.LeaseAheader  = (*aheadCoord)(nil)
	_ runtime.LeaseDeferrer = (*aheadCoord)(nil)
)

func newAheadCoord(clock *clocktest.Fake) *aheadCoord {
	return &aheadCoord{controlCoord: newControlCoord(), clock: clock}
}

func (c *aheadCoord) LeaseAhead() time.Duration { return time.Second } // the pool caps it

func (c *aheadCoord) DeferLease(runtime.LeaseRequest) time.Duration { return c.defer_ }

func (c *aheadCoord) TryAcquireLeases(ctx context.Context, reqs []runtime.LeaseRequest) []runtime.LeaseReply {
	out := make([]runtime.LeaseReply, len(reqs))
	for i, r := range reqs {
		c.amu.Lock()
		c.asked = append(c.asked, aheadAsk{at: c.clock.Now(), run: runtime.RunValue(r.RunNumber), ahead: r.Ahead})
		c.amu.Unlock()
		if r.Ahead && c.ahead != nil {
			out[i] = c.ahead(r.PipelineID, runtime.RunValue(r.RunNumber))
			continue
		}
		out[i].Acquired, out[i].Err = c.fakeCoord.TryAcquireLease(ctx, r.PipelineID, r.RunNumber)
	}
	return out
}

// TryAcquireLease records a request made alone (a runner due by itself
// without an answer from ahead) like one of a batch.
func (c *aheadCoord) TryAcquireLease(ctx context.Context, id string, n int64) (bool, error) {
	c.amu.Lock()
	c.asked = append(c.asked, aheadAsk{at: c.clock.Now(), run: runtime.RunValue(n)})
	c.amu.Unlock()
	return c.fakeCoord.TryAcquireLease(ctx, id, n)
}

func (c *aheadCoord) asks() []aheadAsk {
	c.amu.Lock()
	defer c.amu.Unlock()
	return append([]aheadAsk(nil), c.asked...)
}

// aheadPool starts a pool on coord with one every-second cron pipeline
// "p" whose runs record their start (by the fake clock) and lease.
func aheadPool(t *testing.T, clock *clocktest.Fake, coord runtime.Coordinator) (*poolDriver, *aheadRuns) {
	t.Helper()
	runs := &aheadRuns{}
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * * *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				lease, _ := runtime.LeaseFromContext(ctx)
				runs.add(clock.Now(), lease)
				return nil
			}), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, sp)
	t.Cleanup(func() { _ = d.stop(t) })
	return d, runs
}

type aheadRuns struct {
	mu     sync.Mutex
	starts []time.Time
	leases []runtime.Lease
	n      atomic.Int64
}

func (r *aheadRuns) add(at time.Time, l runtime.Lease) {
	r.mu.Lock()
	r.starts, r.leases = append(r.starts, at), append(r.leases, l)
	r.mu.Unlock()
	r.n.Add(1)
}

func (r *aheadRuns) get() ([]time.Time, []runtime.Lease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.starts...), append([]runtime.Lease(nil), r.leases...)
}

func slotOf(t time.Time) int64 { return t.Unix() }

func TestAheadAsksMaxLeaseAheadBeforeTheSlotAndRunsAtIt(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newAheadCoord(clock)
	d, runs := aheadPool(t, clock, coord)
	slot := t0.Add(time.Second)
	advanceTo(t, clock, d, slot.Add(-runtime.MaxLeaseAhead-time.Millisecond))
	if a := coord.asks(); len(a) != 0 {
		t.Fatalf("asked before the lead: %+v", a)
	}
	advanceTo(t, clock, d, slot.Add(-time.Millisecond))
	a := coord.asks()
	if len(a) != 1 || !a[0].ahead || a[0].run != slotOf(slot) || !a[0].at.Equal(slot.Add(-runtime.MaxLeaseAhead)) {
		t.Fatalf("asks before the slot = %+v; want one ahead for %d at %v", a, slotOf(slot), slot.Add(-runtime.MaxLeaseAhead))
	}
	if runs.n.Load() != 0 {
		t.Fatal("ran before its slot")
	}
	advanceTo(t, clock, d, slot)
	starts, leases := runs.get()
	if len(starts) != 1 || !starts[0].Equal(slot) || leases[0].RunNumber != slotOf(slot) {
		t.Fatalf("runs = %v %+v; want one at the slot %v", starts, leases, slot)
	}
	if a := coord.asks(); len(a) != 1 {
		t.Fatalf("asked again at the boundary: %+v", a)
	}
	// The next slot is asked for ahead in the same way.
	advanceTo(t, clock, d, slot.Add(time.Second))
	if a := coord.asks(); len(a) != 2 || !a[1].ahead || !a[1].at.Equal(slot.Add(time.Second-runtime.MaxLeaseAhead)) {
		t.Fatalf("asks = %+v; want the second ahead too", a)
	}
	if runs.n.Load() != 2 {
		t.Fatalf("%d runs, want 2", runs.n.Load())
	}
}

func TestAheadGrantLostBeforeTheSlotIsAskedForAgain(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newAheadCoord(clock)
	d, runs := aheadPool(t, clock, coord)
	slot := t0.Add(time.Second)
	advanceTo(t, clock, d, slot.Add(-time.Millisecond))
	lost, held := coord.CurrentLease("p")
	if !held {
		t.Fatal("no lease granted ahead")
	}
	// Lost meanwhile (a stop of the process past its deadline, a Redis
	// restart): no run on it, the slot is asked for at the boundary.
	coord.mu.Lock()
	delete(coord.held, "p")
	coord.mu.Unlock()
	coord.loseLease("p", lost)
	advanceTo(t, clock, d, slot)
	a := coord.asks()
	if len(a) != 2 || a[1].ahead || !a[1].at.Equal(slot) {
		t.Fatalf("asks = %+v; want the ahead one and one at the boundary", a)
	}
	_, leases := runs.get()
	if len(leases) != 1 || leases[0].FencingToken == lost.FencingToken {
		t.Fatalf("runs %+v; want one, on the lease granted at the boundary", leases)
	}
}

func TestAheadPauseSetAfterTheGrantIsHonoured(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newAheadCoord(clock)
	d, runs := aheadPool(t, clock, coord)
	slot := t0.Add(time.Second)
	advanceTo(t, clock, d, slot.Add(-time.Millisecond))
	if _, held := coord.CurrentLease("p"); !held {
		t.Fatal("no lease granted ahead")
	}
	coord.setPaused("p", true)
	advanceTo(t, clock, d, slot)
	if runs.n.Load() != 0 {
		t.Fatal("ran while paused")
	}
	if _, held := coord.CurrentLease("p"); held {
		t.Fatal("the lease granted ahead was kept while paused")
	}
	if st := d.status(t, "p"); st.SkippedPaused == 0 {
		t.Errorf("status %+v: the paused slot is not counted as skipped", st)
	}
	// Paused: nothing is asked ahead; unpaused, it resumes.
	advanceTo(t, clock, d, slot.Add(time.Second))
	if a := coord.asks(); len(a) != 1 {
		t.Fatalf("asks while paused = %+v", a)
	}
	coord.setPaused("p", false)
	advanceTo(t, clock, d, slot.Add(2*time.Second))
	if runs.n.Load() != 1 {
		t.Fatalf("%d runs after the pause, want 1", runs.n.Load())
	}
}

func TestAheadStopAfterTheGrantGivesItBack(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newAheadCoord(clock)
	d, runs := aheadPool(t, clock, coord)
	advanceTo(t, clock, d, t0.Add(time.Second-time.Millisecond))
	if _, held := coord.CurrentLease("p"); !held {
		t.Fatal("no lease granted ahead")
	}
	for _, sp := range d.pool.Pipelines() {
		sp.Stop()
	}
	if err := d.result(t); err != nil {
		t.Fatal(err)
	}
	if _, held := coord.CurrentLease("p"); held {
		t.Fatal("the lease granted ahead was not given back at stop")
	}
	if runs.n.Load() != 0 {
		t.Fatal("ran after stop")
	}
}

func TestAheadRefusalStandsAndUndecidedAsksAtTheBoundaryWithoutDeferring(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newAheadCoord(clock)
	coord.defer_ = 300 * time.Millisecond // another worker is preferred
	second := slotOf(t0.Add(2 * time.Second))
	coord.ahead = func(_ string, n int64) runtime.LeaseReply {
		if n == second {
			return runtime.LeaseReply{} // granted elsewhere: refused as held
		}
		return runtime.LeaseReply{Err: runtime.ErrAskAtSlot}
	}
	d, runs := aheadPool(t, clock, coord)
	slot := t0.Add(time.Second)
	advanceTo(t, clock, d, slot.Add(time.Second))
	a := coord.asks()
	// The worker that is not preferred looks at half the lead, and, with
	// nothing granted, asks at the boundary at once (not 300 ms later).
	look := slot.Add(-runtime.MaxLeaseAhead / 2)
	if len(a) < 2 || !a[0].ahead || !a[0].at.Equal(look) || a[1].ahead || !a[1].at.Equal(slot) {
		t.Fatalf("asks = %+v; want a look at %v, then an ask at %v", a, look, slot)
	}
	if starts, _ := runs.get(); len(starts) != 1 || !starts[0].Equal(slot) {
		t.Fatalf("runs at %v; want one at %v", starts, slot)
	}
	// The second slot was granted elsewhere: no ask at its boundary.
	advanceTo(t, clock, d, slot.Add(time.Second+500*time.Millisecond))
	for _, x := range coord.asks()[2:] {
		if x.run == second && !x.ahead {
			t.Fatalf("asked at the boundary for a slot refused ahead: %+v", coord.asks())
		}
	}
	if runs.n.Load() != 1 {
		t.Fatalf("%d runs; the slot refused ahead ran", runs.n.Load())
	}
}

func TestAheadGrantIsGivenBackWhenTheClockGoesBack(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newAheadCoord(clock)
	d, runs := aheadPool(t, clock, coord)
	slot := t0.Add(time.Second)
	advanceTo(t, clock, d, slot.Add(-time.Millisecond))
	if _, held := coord.CurrentLease("p"); !held {
		t.Fatal("no lease granted ahead")
	}
	// An hour back: the slot is an hour off, and its grant is not held
	// that long (other workers would find the pipeline held meanwhile).
	clock.Set(slot.Add(-time.Hour))
	d.settle(t)
	waitFor(t, func() bool { _, held := coord.CurrentLease("p"); return !held }, "the grant given back")
	if runs.n.Load() != 0 {
		t.Fatal("ran after the clock went back")
	}
	// When the slot comes near again, it is asked for ahead and runs once.
	advanceTo(t, clock, d, slot)
	if runs.n.Load() != 1 {
		t.Fatalf("%d runs of the slot, want 1", runs.n.Load())
	}
	if a := coord.asks(); len(a) != 2 || !a[1].ahead {
		t.Fatalf("asks = %+v; want the slot asked for ahead again", a)
	}
}

func TestAheadUndecidedForAnotherReasonKeepsTheDeferral(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newAheadCoord(clock)
	coord.defer_ = 300 * time.Millisecond
	coord.ahead = func(string, int64) runtime.LeaseReply {
		return runtime.LeaseReply{Err: errors.New("the preferred worker lives")}
	}
	d, runs := aheadPool(t, clock, coord)
	slot := t0.Add(time.Second)
	advanceTo(t, clock, d, slot.Add(500*time.Millisecond))
	a := coord.asks()
	if len(a) != 2 || !a[0].ahead || a[1].ahead || !a[1].at.Equal(slot.Add(300*time.Millisecond)) {
		t.Fatalf("asks = %+v; want a look, then an ask 300 ms after the slot; calls %v runs %d", a, coord.callLog(), runs.n.Load())
	}
	if runs.n.Load() != 1 {
		t.Fatalf("%d runs, want 1", runs.n.Load())
	}
}
