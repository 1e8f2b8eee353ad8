package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// TestRunTimeoutCancelsTheRunAndReleasesTheLease runs, on the fake clock, a
// pipeline that waits for its context and one that ignores it: both are
// cancelled when the timeout passes, fail, and give their lease back.
func TestRunTimeoutCancelsTheRunAndReleasesTheLease(t *testing.T) {
	for _, ignores := range []bool{false, true} {
		name := "honours the context"
		if ignores {
			name = "ignores the cancel and returns nil"
		}
		t.Run(name, func(t *testing.T) {
			clock := clocktest.NewFake(t0)
			coord := newFakeCoord()
			started := make(chan struct{})
			causes := make(chan error, 1)
			d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
			d.start(t, &runtime.ScheduledPipeline{PipelineID: "slow", Schedule: runtime.Once(), Timeout: time.Minute, MaxConsecutiveErrors: 1,
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(ctx context.Context) error {
						close(started)
						<-ctx.Done()
						causes <- context.Cause(ctx)
						if ignores {
							return nil
						}
						return ctx.Err()
					}), nil
				}})
			select {
			case <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("the run did not start")
			}
			if !clock.WaitForTimers(1, 5*time.Second) {
				t.Fatal("no timer pending for the timeout")
			}
			clock.Advance(59 * time.Second)
			select {
			case c := <-causes:
				t.Fatalf("cancelled before the timeout: %v", c)
			case <-time.After(20 * time.Millisecond):
			}
			clock.Advance(time.Second)
			if c := <-causes; !errors.Is(c, runtime.ErrRunTimeout) {
				t.Fatalf("cancel cause %v, want ErrRunTimeout", c)
			}
			err := d.result(t)
			if !errors.Is(err, runtime.ErrTooManyErrors) || !errors.Is(err, runtime.ErrRunTimeout) || !strings.Contains(err.Error(), "still running after 1m0s") {
				t.Fatalf("pool returned %v, want the run failed with ErrRunTimeout", err)
			}
			if st := d.status(t, "slow"); st.ConsecutiveErrors != 1 || !strings.Contains(st.LastError, "timed out") {
				t.Fatalf("status %+v, want one failed run", st)
			}
			if _, held := coord.CurrentLease("slow"); held || countCalls(coord, "release slow") != 1 || countCalls(coord, "complete slow") != 0 {
				t.Fatalf("lease held %v, calls %v: want it released, not completed", held, coord.calls)
			}
		})
	}
}

// TestRunWithinItsTimeoutSucceeds: a run that ends in time is not touched
// and leaves no timer behind.
func TestRunWithinItsTimeoutSucceeds(t *testing.T) {
	clock := clocktest.NewFake(t0)
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(newFakeCoord())}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "quick", Schedule: runtime.Once(), Timeout: time.Minute,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error { return ctx.Err() }), nil
		}})
	if err := d.result(t); err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if n := clock.Pending(); n != 0 {
		t.Fatalf("%d timers left pending", n)
	}
}

func TestNegativeTimeoutIsInvalid(t *testing.T) {
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Timeout: -time.Second,
		Factory: func(context.Context) (runtime.Pipeline, error) { return nil, nil }}
	if err := sp.Start(context.Background()); !errors.Is(err, runtime.ErrInvalidPipeline) || !strings.Contains(err.Error(), "negative Timeout") {
		t.Fatalf("Start = %v", err)
	}
}
