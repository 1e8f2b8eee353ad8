package runtime_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

func countingPipeline(id string, n *atomic.Int32, err error) *runtime.ScheduledPipeline {
	return &runtime.ScheduledPipeline{
		PipelineID: id,
		Schedule:   runtime.MustCron("0 0 1 1 *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				n.Add(1)
				return err
			}), nil
		},
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRunNowRunsEveryOrTheNamedPipelinesOnce(t *testing.T) {
	var a, b, c atomic.Int32
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger())).
		Register(countingPipeline("a", &a, nil)).
		Register(countingPipeline("b", &b, nil)).
		Register(countingPipeline("c", &c, nil))
	if err := pool.RunNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.Load() != 1 || b.Load() != 1 || c.Load() != 1 {
		t.Fatalf("runs a=%d b=%d c=%d, want 1 each", a.Load(), b.Load(), c.Load())
	}
	if err := pool.RunNow(context.Background(), "c", "a"); err != nil {
		t.Fatal(err)
	}
	if a.Load() != 2 || b.Load() != 1 || c.Load() != 2 {
		t.Fatalf("runs a=%d b=%d c=%d, want 2 1 2", a.Load(), b.Load(), c.Load())
	}
	// The pool still runs normally afterwards: RunNow does not use it up.
	if err := pool.RunNow(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	if b.Load() != 2 {
		t.Fatalf("b ran %d times, want 2", b.Load())
	}
}

func TestRunNowNamesEveryFailureAndUnknownID(t *testing.T) {
	var ok, bad atomic.Int32
	boom := errors.New("boom")
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger())).
		Register(countingPipeline("good", &ok, nil)).
		Register(countingPipeline("bad", &bad, boom))

	err := pool.RunNow(context.Background())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `pipeline "bad"`) {
		t.Fatalf("err = %v, want one naming bad and wrapping boom", err)
	}
	if strings.Contains(err.Error(), `"good"`) {
		t.Fatalf("err = %v names the pipeline that succeeded", err)
	}

	err = pool.RunNow(context.Background(), "good", "nope")
	if !errors.Is(err, runtime.ErrUnknownPipeline) || !strings.Contains(err.Error(), `"nope"`) ||
		!strings.Contains(err.Error(), "good, bad") {
		t.Fatalf("err = %v, want unknown pipeline nope listing the registered ones", err)
	}
	if ok.Load() != 1 {
		t.Fatalf("good ran %d times; an unknown id must stop RunNow before anything runs", ok.Load())
	}
}

func TestRunNowUsesTheCoordinatorAndCarriesTheLease(t *testing.T) {
	coord := newFakeCoord()
	var got runtime.Lease
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger()), runtime.WithCoordinator(coord), runtime.WithWorkerID("w1")).
		Register(&runtime.ScheduledPipeline{
			PipelineID: "p",
			Schedule:   runtime.Every(3600e9),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					got, _ = runtime.LeaseFromContext(ctx)
					return nil
				}), nil
			},
		})
	if err := pool.RunNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !got.Fenced() || got.PipelineID != "p" || got.RunNumber != runtime.RunNumberAuto {
		t.Fatalf("lease in the run = %+v, want a fenced RunNumberAuto lease for p", got)
	}
	calls := strings.Join(coord.callLog(), ";")
	for _, want := range []string{"start", "acquire p", "complete p", "stop"} {
		if !strings.Contains(calls, want) {
			t.Fatalf("coordinator calls %q lack %q", calls, want)
		}
	}

	coord.mu.Lock()
	coord.decide = func(string, int64) (bool, error) { return false, nil }
	coord.mu.Unlock()
	if err := pool.RunNow(context.Background()); !errors.Is(err, runtime.ErrLeaseHeld) {
		t.Fatalf("err = %v, want ErrLeaseHeld", err)
	}
}

func TestRunNowCancelledContextCancelsTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger())).
		Register(&runtime.ScheduledPipeline{
			PipelineID: "slow",
			Schedule:   runtime.Continuous(),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					cancel()
					<-ctx.Done()
					return ctx.Err()
				}), nil
			},
		})
	if err := pool.RunNow(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
