package runtime_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// TestRerunOfAnInterruptedSlotIsFollowedByTheAskedOne is the worker that
// took over a dead holder's lease with RerunInterrupted: the coordinator
// grants the slot the holder left unfinished, the pool runs it, and then
// asks for the slot it wanted at once, not at the next slot.
func TestRerunOfAnInterruptedSlotIsFollowedByTheAskedOne(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)
	clock := clocktest.NewFake(start)
	coord := newFakeCoord()
	interrupted := start.Truncate(time.Minute).Unix() // 10:00, left unfinished
	asked := interrupted + 60                         // 10:01
	var once sync.Once
	coord.grantRun = func(_ string, n int64) int64 {
		run := n
		if n == asked {
			once.Do(func() { run = interrupted })
		}
		return run
	}
	var (
		mu   sync.Mutex
		runs []int64
	)
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"), RerunInterrupted: true,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				lease, _ := runtime.LeaseFromContext(ctx)
				mu.Lock()
				runs = append(runs, lease.RunNumber)
				mu.Unlock()
				return nil
			}), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, sp)
	advanceTo(t, clock, d, time.Unix(asked, 0).Add(time.Second))
	mu.Lock()
	got := slices.Clone(runs)
	mu.Unlock()
	if want := []int64{interrupted, asked}; !slices.Equal(got, want) {
		t.Fatalf("runs by 10:01:01 = %v, want the interrupted 10:00 and then 10:01 %v", got, want)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
