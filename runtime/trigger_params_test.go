package runtime_test

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

func TestTriggerParamsReachTheRunOnly(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newControlCoord()
	var mu sync.Mutex
	var seen []map[string]string
	factory := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			mu.Lock()
			seen = append(seen, runtime.ParamsFromContext(ctx))
			mu.Unlock()
			return nil
		}), nil
	}
	runs := func() []map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]string(nil), seen...)
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 * * * *"), Factory: factory})
	d.settle(t)

	coord.cmu.Lock()
	h := coord.handler
	coord.cmu.Unlock()
	want := map[string]string{"day": "2026-01-01"}
	h(runtime.Trigger{PipelineID: "p", Params: want})
	waitFor(t, func() bool { return len(runs()) == 1 }, "the triggered run")
	if got := runs()[0]; !maps.Equal(got, want) {
		t.Fatalf("triggered run's params %v, want %v", got, want)
	}
	advanceTo(t, clock, d, time.Date(2025, 3, 10, 11, 0, 0, 0, time.UTC))
	waitFor(t, func() bool { return len(runs()) == 2 }, "the scheduled run")
	if got := runs()[1]; got != nil {
		t.Fatalf("scheduled run's params %v, want nil", got)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
