package distributed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

// controlRun is one run seen by a test fleet.
type controlRun struct {
	worker string
	lease  runtime.Lease
	params map[string]string
}

// testFleet is n worker pools on one real redis-server, each with its own
// coordinator polling the fleet's commands every 20 ms.
type testFleet struct {
	r      *real
	pools  []*runtime.WorkerPool
	coords []*RedisWorkerCoordinator
	admin  *RedisWorkerCoordinator

	mu   sync.Mutex
	runs []controlRun
}

func newTestFleet(t *testing.T, n int, schedule runtime.Schedule, runFor time.Duration) *testFleet {
	t.Helper()
	f := &testFleet{r: newReal(t)}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := range n {
		opts := f.r.options(5 * time.Second)
		opts.Logger = quiet
		coord, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		coord.ctl.every = 20 * time.Millisecond
		t.Cleanup(func() { _ = coord.Close() })
		worker := fmt.Sprintf("replica-%d", i)
		pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithWorkerID(worker),
			runtime.WithLogger(quiet), runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: schedule,
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(ctx context.Context) error {
						lease, _ := runtime.LeaseFromContext(ctx)
						f.mu.Lock()
						f.runs = append(f.runs, controlRun{worker, lease, runtime.ParamsFromContext(ctx)})
						f.mu.Unlock()
						time.Sleep(runFor)
						return nil
					}), nil
				}})
		wg.Go(func() { _ = pool.Run(ctx) })
		<-pool.Started()
		f.pools = append(f.pools, pool)
		f.coords = append(f.coords, coord)
	}
	admin, err := NewRedisWorkerCoordinator(f.r.options(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.admin = admin
	return f
}

func (f *testFleet) seen() []controlRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]controlRun(nil), f.runs...)
}

func TestPauseStopsEveryReplicaAndResumeRestarts(t *testing.T) {
	f := newTestFleet(t, 3, runtime.Continuous(), 5*time.Millisecond)
	waitUntil(t, 5*time.Second, "continuous runs", func() bool { return len(f.seen()) >= 3 })

	if err := f.admin.Pause(ctx, "p", "test"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "every replica to see the pause", func() bool {
		for _, p := range f.pools {
			if !p.Status().Pipelines[0].Paused {
				return false
			}
		}
		return true
	})
	// A run that started before a replica's poll may still finish now.
	time.Sleep(50 * time.Millisecond)
	before := len(f.seen())
	time.Sleep(200 * time.Millisecond) // ten polls, forty lease retries
	if after := len(f.seen()); after != before {
		t.Fatalf("%d runs started while paused", after-before)
	}
	paused, err := f.admin.PausedPipelines(ctx)
	if err != nil || paused["p"].By != "test" || paused["p"].At.IsZero() {
		t.Fatalf("PausedPipelines = %v, %v", paused, err)
	}
	var skipped uint64
	for _, p := range f.pools {
		skipped += p.Status().Pipelines[0].SkippedPaused
	}
	if skipped == 0 {
		t.Fatal("no attempt counted as skipped for the pause")
	}

	if was, err := f.admin.Resume(ctx, "p"); err != nil || !was {
		t.Fatalf("Resume = %v, %v", was, err)
	}
	waitUntil(t, 5*time.Second, "runs after resume", func() bool { return len(f.seen()) > before+2 })
	if was, err := f.admin.Resume(ctx, "p"); err != nil || was {
		t.Fatalf("second Resume = %v, %v; want false: not paused", was, err)
	}
}

func TestTriggerRunsOnceOnExactlyOneReplica(t *testing.T) {
	f := newTestFleet(t, 3, runtime.MustCron("0 0 1 1 *"), 0)
	for i := 1; i <= 3; i++ {
		requested := time.Now()
		if err := f.admin.Trigger(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 5*time.Second, "the triggered run", func() bool { return len(f.seen()) >= i })
		if took := time.Since(requested); took > time.Second {
			t.Errorf("trigger %d picked up after %s, want within about a second", i, took)
		}
		// Give the other replicas several polls to (wrongly) run it too.
		time.Sleep(100 * time.Millisecond)
		if n := len(f.seen()); n != i {
			t.Fatalf("after %d triggers %d runs: %+v", i, n, f.seen())
		}
	}
	runs := f.seen()
	for i, r := range runs {
		if !r.lease.Fenced() || r.lease.RunNumber != r.lease.FencingToken {
			t.Fatalf("run %d lease %+v, want fenced and numbered by its token", i, r.lease)
		}
		if i > 0 && r.lease.FencingToken <= runs[i-1].lease.FencingToken {
			t.Fatalf("tokens do not increase: %+v", runs)
		}
	}
	if pending, err := f.admin.PendingTriggers(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("PendingTriggers = %v, %v; want none left", pending, err)
	}
	// The schedule is untouched: no slot recorded as completed (the key
	// holds the runs' history records, and no slot member).
	if slot, err := f.r.client(0).ZScore(ctx, "agora:distributed:completed:{p}", doneMember).Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("completed slot = %v, %v; want a trigger to record no slot", slot, err)
	}
}
