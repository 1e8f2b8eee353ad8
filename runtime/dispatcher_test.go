package runtime_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// TestBlockedRunsNeverDelayOthers checks that runs which block do not hold
// up other due pipelines, and that the executors started for them are
// trimmed once they are idle again.
func TestBlockedRunsNeverDelayOthers(t *testing.T) {
	const n = 50
	clock := clocktest.NewFake(t0)
	release := make(chan struct{})
	var inFlight atomic.Int32
	all := make(chan struct{})
	d := &poolDriver{clock: clock, logs: &syncBuffer{}}
	var sps []*runtime.ScheduledPipeline
	for i := range n {
		sps = append(sps, &runtime.ScheduledPipeline{PipelineID: fmt.Sprintf("p%d", i), Schedule: runtime.Every(time.Hour),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					if inFlight.Add(1) == n {
						close(all)
					}
					<-release
					inFlight.Add(-1)
					return nil
				}), nil
			}})
	}
	d.start(t, sps...)
	waitClosed(t, all, "every run in flight at once")
	if total, busy := d.pool.Executors(); total < n || busy != n {
		t.Fatalf("executors total %d busy %d, want at least %d busy", total, busy, n)
	}
	close(release)
	// Idle executors beyond a few are asked to exit, one per dispatcher pass.
	limit := int64(2 * goruntime.GOMAXPROCS(0))
	for i := 0; ; i++ {
		d.settle(t)
		total, busy := d.pool.Executors()
		if busy == 0 && total <= limit {
			break
		}
		if i > 200 {
			t.Fatalf("executors not trimmed: total %d busy %d", total, busy)
		}
		clock.Advance(time.Second)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestManyPipelinesFewGoroutines checks that a burst of short runs is served
// by a handful of goroutines rather than one per run.
func TestManyPipelinesFewGoroutines(t *testing.T) {
	const n = 2000
	clock := clocktest.NewFake(t0)
	var runs atomic.Int32
	d := &poolDriver{clock: clock, logs: &syncBuffer{}}
	var sps []*runtime.ScheduledPipeline
	factory := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(context.Context) error { runs.Add(1); return nil }), nil
	}
	for i := range n {
		sps = append(sps, &runtime.ScheduledPipeline{PipelineID: fmt.Sprintf("p%d", i), Schedule: runtime.MustCron("* * * * * *"), Factory: factory})
	}
	base := goruntime.NumGoroutine()
	var maxG atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if g := int64(goruntime.NumGoroutine()); g > maxG.Load() {
				maxG.Store(g)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Microsecond):
			}
		}
	}()
	d.start(t, sps...)
	for s := 1; s <= 3; s++ {
		advanceTo(t, clock, d, t0.Add(time.Duration(s)*time.Second))
	}
	close(stopSampling)
	<-sampled
	if got := runs.Load(); got != 3*n {
		t.Fatalf("runs = %d, want %d", got, 3*n)
	}
	if extra := int(maxG.Load()) - base - 1; extra > 100 {
		t.Fatalf("%d goroutines for %d pipelines", extra, n)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
