package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// controlCoord is a fakeCoord carrying fleet commands.
type controlCoord struct {
	*fakeCoord
	cmu     sync.Mutex
	paused  map[string]bool
	handler func(runtime.Trigger)
}

func (c *controlCoord) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.FleetController = c
	return caps
}

var _ runtime.FleetController = (*controlCoord)(nil)

func newControlCoord() *controlCoord {
	return &controlCoord{fakeCoord: newFakeCoord(), paused: map[string]bool{}}
}

func (c *controlCoord) Paused(id string) bool {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	return c.paused[id]
}

func (c *controlCoord) setPaused(id string, p bool) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.paused[id] = p
}

func (c *controlCoord) SetTriggerHandler(h func(runtime.Trigger)) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.handler = h
}

func (c *controlCoord) trigger(id string) {
	c.cmu.Lock()
	h := c.handler
	c.cmu.Unlock()
	h(runtime.Trigger{PipelineID: id})
}

// leases records the lease of every run of a pipeline.
type leaseLog struct {
	mu     sync.Mutex
	leases []runtime.Lease
}

func (l *leaseLog) factory(block <-chan struct{}) runtime.Factory {
	return func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			lease, _ := runtime.LeaseFromContext(ctx)
			l.mu.Lock()
			l.leases = append(l.leases, lease)
			l.mu.Unlock()
			if block != nil {
				<-block
			}
			return nil
		}), nil
	}
}

func (l *leaseLog) list() []runtime.Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]runtime.Lease(nil), l.leases...)
}

func TestPausedPipelineSkipsItsSlotsAndResumes(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	coord := newControlCoord()
	var runs leaseLog
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
		runtime.WithCoordinator(coord), runtime.WithHealthAddr("127.0.0.1:0")}}
	coord.setPaused("p", true)
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"), Factory: runs.factory(nil)})

	advanceTo(t, clock, d, t0.Add(90*time.Second)) // slots 10:08 and 10:09
	if n := len(runs.list()); n != 0 {
		t.Fatalf("a paused pipeline ran %d times", n)
	}
	st := d.status(t, "p")
	if !st.Paused || st.SkippedPaused != 2 || st.Skipped != 0 {
		t.Fatalf("status %+v, want paused with 2 paused skips", st)
	}
	for _, call := range coord.callLog() {
		if call != "start" {
			t.Fatalf("a paused pipeline asked the coordinator: %v", coord.callLog())
		}
	}
	fams := scrape(t, d.pool.HealthAddr())
	if v := value(t, fams, "agora_attempts_skipped_total", "pipeline", "p", "reason", "paused"); v != 2 {
		t.Fatalf("paused skips metric = %v, want 2", v)
	}
	if v := value(t, fams, "agora_pipeline_paused", "pipeline", "p"); v != 1 {
		t.Fatalf("agora_pipeline_paused = %v, want 1", v)
	}

	coord.setPaused("p", false)
	advanceTo(t, clock, d, t0.Add(150*time.Second)) // 10:10
	got := runs.list()
	if len(got) != 1 || got[0].RunNumber != time.Date(2025, 3, 10, 10, 10, 0, 0, time.UTC).Unix() {
		t.Fatalf("after resume: runs %+v, want the 10:10 slot", got)
	}
	if st := d.status(t, "p"); st.Paused {
		t.Fatal("status still paused after resume")
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestPauseLetsTheRunInFlightFinish(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newControlCoord()
	var runs leaseLog
	release := make(chan struct{})
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Minute), Factory: runs.factory(release)})
	waitFor(t, func() bool { return len(runs.list()) == 1 }, "the first run")
	coord.setPaused("p", true)
	close(release)
	waitFor(t, func() bool { return d.status(t, "p").Runs == 1 }, "the run to finish")
	if st := d.status(t, "p"); st.Failures != 0 {
		t.Fatalf("the run in flight failed after the pause: %+v", st)
	}
	advanceTo(t, clock, d, t0.Add(3*time.Minute))
	if st := d.status(t, "p"); st.Runs != 1 || st.SkippedPaused == 0 {
		t.Fatalf("status %+v, want one run then paused skips", st)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestTriggerRunsOnceNowAndLeavesTheScheduleAlone(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newControlCoord()
	var runs leaseLog
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 * * * *"), Factory: runs.factory(nil)})
	d.settle(t)
	before := d.status(t, "p").NextRun

	// Held elsewhere twice: the trigger asks again every second.
	refusals := 2
	coord.mu.Lock()
	coord.decide = func(string, int64) (bool, error) {
		if refusals > 0 {
			refusals--
			return false, nil
		}
		return true, nil
	}
	coord.mu.Unlock()
	base := clock.Pending()
	coord.trigger("p")
	for i := 1; i <= 2; i++ {
		waitFor(t, func() bool { return countCalls(coord.fakeCoord, "refuse p") == i && clock.Pending() > base },
			"the trigger's retry timer")
		clock.Advance(time.Second)
	}
	waitFor(t, func() bool { return len(runs.list()) == 1 }, "the triggered run")
	waitFor(t, func() bool { return d.status(t, "p").Runs == 1 }, "the triggered run to be counted")
	got := runs.list()[0]
	if got.RunNumber != runtime.RunNumberAuto || !got.Fenced() {
		t.Fatalf("triggered lease %+v, want a fenced RunNumberAuto lease", got)
	}
	if waited := clock.Now().Sub(t0); waited != 2*time.Second {
		t.Fatalf("triggered run after %s, want 2s (two refusals, one retry a second)", waited)
	}
	st := d.status(t, "p")
	if st.NextRun == nil || !st.NextRun.Equal(*before) || st.State != runtime.StateIdle {
		t.Fatalf("status after the trigger %+v, want the schedule's next run %v untouched", st, before)
	}
	// The hourly slot still runs at 11:00.
	advanceTo(t, clock, d, time.Date(2025, 3, 10, 11, 0, 0, 0, time.UTC))
	if n := len(runs.list()); n != 2 {
		t.Fatalf("%d runs, want the trigger's and the 11:00 slot's", n)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func countCalls(c *fakeCoord, call string) int {
	n := 0
	for _, got := range c.callLog() {
		if got == call {
			n++
		}
	}
	return n
}
