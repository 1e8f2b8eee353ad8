package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// TestStatusKeepsTheLastFinishedRunApartFromTheOneInFlight checks that
// last_run_start and last_run_end describe one finished run, and that the
// run in flight is running_since, so the end is never before the start.
func TestStatusKeepsTheLastFinishedRunApartFromTheOneInFlight(t *testing.T) {
	inSecond, release := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	pool := quietPool().Register(&runtime.ScheduledPipeline{PipelineID: "c", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			if n.Add(1) == 2 {
				close(inSecond)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return nil
		}), nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	waitClosed(t, inSecond, "the second run")

	st := pool.Status().Pipelines[0]
	switch {
	case st.Runs != 1:
		t.Fatalf("runs = %d, want 1 finished", st.Runs)
	case st.RunningSince == nil || st.LastRunStart == nil || st.LastRunEnd == nil:
		t.Fatalf("running_since %v, last_run_start %v, last_run_end %v: want all three", st.RunningSince, st.LastRunStart, st.LastRunEnd)
	case st.LastRunEnd.Before(*st.LastRunStart):
		t.Fatalf("last run ended (%v) before it started (%v)", st.LastRunEnd, st.LastRunStart)
	case st.RunningSince.Before(*st.LastRunEnd):
		t.Fatalf("the run in flight started (%v) before the last one ended (%v)", st.RunningSince, st.LastRunEnd)
	}
	close(release)
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	if st := pool.Status().Pipelines[0]; st.RunningSince != nil || st.LastRunStart == nil || st.LastRunEnd.Before(*st.LastRunStart) {
		t.Fatalf("after the run: running_since %v, last_run_start %v, last_run_end %v", st.RunningSince, st.LastRunStart, st.LastRunEnd)
	}
}
