package runtime_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

func TestRunKinds(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		run   int64
		kind  runtime.RunKind
		value int64
	}{
		{runtime.RunNumberAuto, runtime.RunContinuous, 0},
		{runtime.RunNumberOnce, runtime.RunOnce, -1},
		{42, runtime.RunCounted, 42},
		{runtime.CountedRun(7), runtime.RunCounted, 7},
		{at.Unix(), runtime.RunCounted, at.Unix()}, // a bare second is a count
		{runtime.MaxCountedRun, runtime.RunCounted, runtime.MaxCountedRun},
		{runtime.SlotRun(at), runtime.RunSlot, at.Unix()},
		{runtime.SlotRunUnix(1), runtime.RunSlot, 1},
		{-2, runtime.RunInvalid, -2},
		{runtime.MaxCountedRun + 1, runtime.RunInvalid, runtime.MaxCountedRun + 1}, // the flag alone
	} {
		if got := runtime.RunKindOf(tc.run); got != tc.kind {
			t.Errorf("RunKindOf(%d) = %v; want %v", tc.run, got, tc.kind)
		}
		if tc.kind != runtime.RunInvalid {
			if got := runtime.RunValue(tc.run); got != tc.value {
				t.Errorf("RunValue(%d) = %d; want %d", tc.run, got, tc.value)
			}
		}
	}
	if runtime.SlotRun(at) <= runtime.MaxCountedRun || runtime.SlotRun(at) >= runtime.SlotRun(at.Add(time.Second)) {
		t.Error("slots must sort above every counted run, in time order")
	}
	for _, bad := range []func(){
		func() { runtime.SlotRunUnix(0) },
		func() { runtime.SlotRun(time.Unix(-5, 0)) },
		func() { runtime.CountedRun(0) },
		func() { runtime.CountedRun(runtime.MaxCountedRun + 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("an out-of-range run number was made without a panic")
				}
			}()
			bad()
		}()
	}
	if runtime.RunSlot.String() != "slot" || runtime.RunCounted.String() != "counted" {
		t.Error("kind names")
	}
}

// The pool asks for its cron and Every runs as slots, and for Continuous
// ones as RunNumberAuto: never as counted runs.
func TestPoolAsksForSlotsAsSlots(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFakeCoord()
	nop := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t,
		&runtime.ScheduledPipeline{PipelineID: "cron", Schedule: runtime.MustCron("* * * * * *"), Factory: nop},
		&runtime.ScheduledPipeline{PipelineID: "every", Schedule: runtime.Every(time.Second), Factory: nop})
	advanceTo(t, clock, d, t0.Add(3*time.Second))
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	coord.mu.Lock()
	kinds := slices.Clone(coord.kinds)
	coord.mu.Unlock()
	if len(kinds) == 0 {
		t.Fatal("the pool asked for no lease")
	}
	for _, k := range kinds {
		if k != runtime.RunSlot {
			t.Fatalf("the pool asked with run kinds %v; want slots only", kinds)
		}
	}
}
