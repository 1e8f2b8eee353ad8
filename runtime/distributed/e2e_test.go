package distributed

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// TestEndToEndThreePoolsRunEachCronSlotOnce runs three worker pools, as three
// replicas would, against one redis-server, with one pipeline on a
// every-second cron schedule: each slot runs exactly once across the fleet,
// and fencing tokens increase slot after slot.
func TestEndToEndThreePoolsRunEachCronSlotOnce(t *testing.T) {
	r := newReal(t)
	const slots = 10
	type run struct {
		slot, token int64
		worker      string
	}
	var (
		mu     sync.Mutex
		runs   []run
		enough = make(chan struct{})
		once   sync.Once
	)
	distinct := func() int {
		seen := map[int64]bool{}
		for _, x := range runs {
			seen[x.slot] = true
		}
		return len(seen)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var coords []*RedisWorkerCoordinator
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		workerID := fmt.Sprintf("replica-%d", i)
		opts := r.options(5 * time.Second)
		opts.Logger = quiet
		coord, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = coord.Close() })
		coords = append(coords, coord)
		pool := runtime.NewWorkerPool(
			runtime.WithCoordinator(coord),
			runtime.WithWorkerID(workerID),
			runtime.WithLogger(quiet),
			runtime.WithSignalHandling(false),
			runtime.WithGracefulShutdownTimeout(5*time.Second),
		)
		pool.Register(&runtime.ScheduledPipeline{
			PipelineID: "tick",
			Schedule:   runtime.MustCron("* * * * * *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					lease, ok := runtime.LeaseFromContext(ctx)
					if !ok {
						return fmt.Errorf("run without a lease")
					}
					mu.Lock()
					runs = append(runs, run{slot: lease.RunNumber, token: lease.FencingToken, worker: lease.WorkerID})
					if distinct() >= slots {
						once.Do(func() { close(enough) })
					}
					mu.Unlock()
					// Sometimes still running when the others fire, sometimes
					// already done: both paths must refuse them.
					time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
					return nil
				}), nil
			},
		})
		go func() { errs <- pool.Run(ctx) }()
	}

	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatalf("only %d slots ran before the timeout", distinct())
	}
	// Let the slot in flight finish, then stop all three replicas.
	time.Sleep(500 * time.Millisecond)
	cancel()
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Errorf("pool.Run: %v", err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	sort.Slice(runs, func(i, j int) bool { return runs[i].slot < runs[j].slot })
	perWorker := map[string]int{}
	missed := 0
	for i, x := range runs {
		perWorker[x.worker]++
		if i == 0 {
			continue
		}
		prev := runs[i-1]
		if x.slot == prev.slot {
			t.Fatalf("slot %d ran twice: on %s (token %d) and %s (token %d)", x.slot, prev.worker, prev.token, x.worker, x.token)
		}
		if x.slot != prev.slot+1 {
			// A replica runs every slot it can; only a machine stalled for
			// over a second can make all three miss one.
			missed += int(x.slot - prev.slot - 1)
			t.Logf("slots %d to %d ran nowhere", prev.slot+1, x.slot-1)
		}
		if x.token <= prev.token {
			t.Errorf("slot %d token %d not above slot %d token %d", x.slot, x.token, prev.slot, prev.token)
		}
	}
	if missed > 1 {
		t.Errorf("%d slots ran on no replica", missed)
	}
	if len(runs) < slots {
		t.Fatalf("%d runs, want at least %d", len(runs), slots)
	}
	var refused uint64
	for _, c := range coords {
		st := c.Status().(CoordinatorStatus)
		refused += st.Contended + st.SlotCompleted
	}
	if refused < uint64(len(runs)) {
		t.Errorf("only %d refusals for %d runs on three replicas: were they really competing?", refused, len(runs))
	}
	t.Logf("%d slots, runs per replica %v, %d refusals", len(runs), perWorker, refused)
}
