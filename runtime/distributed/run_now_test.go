package distributed

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// TestRunNowTakesAFencedLeaseAndLeavesTheScheduleAlone runs a pipeline now
// through a pool on a real redis-server: refused while another replica
// holds the lease, then run under a fenced lease of its own, without
// recording any slot as done.
func TestRunNowTakesAFencedLeaseAndLeavesTheScheduleAlone(t *testing.T) {
	r := newReal(t)
	other := r.started(r.options(5*time.Second), "other")
	held := mustAcquire(t, other, "p", 1_700_000_000)

	coord, err := NewRedisWorkerCoordinator(r.options(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Close() })
	var got runtime.Lease
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithWorkerID("cli"),
		runtime.WithLogger(r.options(0).Logger)).
		Register(&runtime.ScheduledPipeline{
			PipelineID: "p",
			Schedule:   runtime.MustCron("* * * * *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					got, _ = runtime.LeaseFromContext(ctx)
					return nil
				}), nil
			},
		})

	if err := pool.RunNow(ctx, "p"); !errors.Is(err, runtime.ErrLeaseHeld) {
		t.Fatalf("RunNow while another replica holds the lease: %v, want ErrLeaseHeld", err)
	}
	if err := other.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if err := pool.RunNow(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if got.FencingToken <= held.FencingToken || got.RunNumber != got.FencingToken || got.WorkerID != "cli" {
		t.Fatalf("run-now lease %+v, want a token above %d used as its run number, worker cli", got, held.FencingToken)
	}
	done, err := r.client(0).ZScore(ctx, "agora:distributed:completed:{p}", "slot").Result()
	if err != nil || done != 1_700_000_000 {
		t.Fatalf("last completed slot = %v (%v), want the scheduled one untouched", done, err)
	}
	// The lease was given back: the next slot is free for any replica.
	mustAcquire(t, other, "p", 1_700_000_060)
	// RunNow stopped its coordinator: the worker record is gone.
	workers, err := other.ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range workers {
		if w.ID == "cli" {
			t.Fatalf("worker record of the run-now worker left behind: %+v", w)
		}
	}
}
