package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

// loggingCoord is the wrapper a user writes around a coordinator: it
// embeds the inner one and overrides one method. Embedding forwards
// Capabilities, so the pool keeps every capability of the inner one.
type loggingCoord struct {
	runtime.Coordinator
	starts atomic.Int32
}

func (c *loggingCoord) Start(ctx context.Context, workerID string, ids []string) error {
	c.starts.Add(1)
	return c.Coordinator.Start(ctx, workerID, ids)
}

func TestWrappedCoordinatorKeepsItsCapabilities(t *testing.T) {
	const n = 20
	clock := clocktest.NewFake(t0)
	inner := &batchCoord{fakeCoord: newFakeCoord()}
	inner.status = map[string]string{"kind": "fake"}
	wrapper := &loggingCoord{Coordinator: inner}
	var runs atomic.Int64
	var sps []*runtime.ScheduledPipeline
	for i := range n {
		sps = append(sps, &runtime.ScheduledPipeline{PipelineID: fmt.Sprintf("p%d", i), Schedule: runtime.MustCron("* * * * * *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { runs.Add(1); return nil }), nil
			}})
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(wrapper)}}
	d.start(t, sps...)
	advanceTo(t, clock, d, t0.Add(time.Second))
	if got := runs.Load(); got != n {
		t.Fatalf("%d runs, want %d", got, n)
	}
	if wrapper.starts.Load() != 1 {
		t.Errorf("the wrapper's Start was called %d times, want 1", wrapper.starts.Load())
	}
	// Batching: every lease was asked for in a batch, through the wrapper.
	if s := inner.singles.Load(); s != 0 {
		t.Errorf("%d lease requests made one by one through the wrapper; want every one in a batch", s)
	}
	if len(inner.batchSizes()) == 0 {
		t.Error("no batch asked for through the wrapper")
	}
	// Completion: a successful run completes its lease, never just releases it.
	inner.mu.Lock()
	calls := slices.Clone(inner.calls)
	inner.mu.Unlock()
	completes := 0
	for _, c := range calls {
		if strings.HasPrefix(c, "release ") {
			t.Errorf("%q: a successful run's lease was released, not completed", c)
		}
		if strings.HasPrefix(c, "complete ") {
			completes++
		}
	}
	if completes != n {
		t.Errorf("%d completions, want %d", completes, n)
	}
	// Status: the inner coordinator's status reaches /status.
	if st := d.pool.Status(); !strings.Contains(string(st.Coordinator), `"fake"`) {
		t.Errorf("coordinator status %s, want the inner coordinator's", st.Coordinator)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestWrappedLocalCoordinatorKeepsItsHistory: a wrapper around the local
// coordinator forwards its capabilities, the in-memory leases included,
// and still completes slots and records runs.
func TestWrappedLocalCoordinatorKeepsItsHistory(t *testing.T) {
	clock := clocktest.NewFake(t0)
	local := runtime.NewLocalCoordinator(clock, runtime.WithLocalRunHistory(history.New(history.Policy{})))
	wrapper := &loggingCoord{Coordinator: local}
	var runs atomic.Int64
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * * *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { runs.Add(1); return nil }), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(wrapper)}}
	d.start(t, sp)
	advanceTo(t, clock, d, t0.Add(3*time.Second))
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 3 {
		t.Fatalf("%d runs, want 3", runs.Load())
	}
	hist, err := local.RunHistory(context.Background(), "p", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 3 {
		t.Fatalf("history has %d runs, want 3: %+v", len(hist), hist)
	}
	for i, rec := range hist {
		want := t0.Add(time.Duration(3-i) * time.Second).Unix()
		if rec.Outcome != history.OutcomeSucceeded || rec.RunNumber != want {
			t.Errorf("history[%d] = %s run %d, want succeeded run %d", i, rec.Outcome, rec.RunNumber, want)
		}
	}
	// Completed through the wrapper: the slot is refused again.
	ok, err := local.TryAcquireLease(context.Background(), "p", runtime.SlotRun(t0.Add(3*time.Second)))
	if ok || err == nil {
		t.Errorf("a completed slot acquired again: %v, %v", ok, err)
	}
}

// countingCoord counts the lease requests that reach its own methods.
type countingCoord struct {
	runtime.Coordinator
	asks      atomic.Int32
	completes atomic.Int32
	noLocal   bool // hide the inner LocalLeaser, so leases go through the methods
}

func (c *countingCoord) TryAcquireLease(ctx context.Context, id string, n int64) (bool, error) {
	c.asks.Add(1)
	return c.Coordinator.TryAcquireLease(ctx, id, n)
}

func (c *countingCoord) CompleteLease(ctx context.Context, id string) error {
	c.completes.Add(1)
	return c.Coordinator.CompleteLease(ctx, id)
}

func (c *countingCoord) Capabilities() runtime.Capabilities {
	caps := c.Coordinator.Capabilities()
	if c.noLocal {
		// The wrapper wants to see every lease: it takes the local path
		// away (and RunRecorder, which gives leases back in one step).
		caps.LocalLeaser, caps.RunRecorder = nil, nil
	}
	return caps
}

// The pool finds the local coordinator's in-memory path through
// Capabilities, not by its type: a wrapper that forwards them gets it
// (its own lease methods are not called), and one that sets LocalLeaser
// nil sees every lease through its methods. Either way each slot runs
// once and is completed.
func TestWrappedLocalCoordinatorTakesTheLocalPathThroughCapabilities(t *testing.T) {
	for _, noLocal := range []bool{false, true} {
		t.Run(fmt.Sprintf("noLocal=%v", noLocal), func(t *testing.T) {
			clock := clocktest.NewFake(t0)
			local := runtime.NewLocalCoordinator(clock)
			wrapper := &countingCoord{Coordinator: local, noLocal: noLocal}
			var runs atomic.Int64
			sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * * *"),
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(context.Context) error { runs.Add(1); return nil }), nil
				}}
			d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(wrapper)}}
			d.start(t, sp)
			advanceTo(t, clock, d, t0.Add(3*time.Second))
			if err := d.stop(t); err != nil {
				t.Fatal(err)
			}
			if runs.Load() != 3 {
				t.Fatalf("%d runs, want 3", runs.Load())
			}
			want := int32(0)
			if noLocal {
				want = 3
			}
			if got := wrapper.asks.Load(); got != want {
				t.Errorf("the wrapper's TryAcquireLease was called %d times, want %d", got, want)
			}
			if got := wrapper.completes.Load(); got != want {
				t.Errorf("the wrapper's CompleteLease was called %d times, want %d", got, want)
			}
			ok, err := local.TryAcquireLease(context.Background(), "p", runtime.SlotRun(t0.Add(3*time.Second)))
			if ok || !errors.Is(err, runtime.ErrSlotCompleted) {
				t.Errorf("the last slot asked for again: %v, %v; want it refused as completed", ok, err)
			}
		})
	}
}
