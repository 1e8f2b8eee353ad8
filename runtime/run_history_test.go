package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

// staleErr carries its own outcome, as fencing's StaleWriterError does.
type staleErr struct{}

func (staleErr) Error() string               { return "refused" }
func (staleErr) RunOutcome() history.Outcome { return history.OutcomeStale }

func TestLocalRunHistoryKeepsEveryRunInMemory(t *testing.T) {
	coord := runtime.NewLocalCoordinator(nil, runtime.WithLocalRunHistory(history.New(history.Policy{})))
	calls := 0
	sp := &runtime.ScheduledPipeline{
		PipelineID: "p",
		Schedule:   runtime.MustCron("0 0 1 1 *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				calls++
				runtime.CountRecords(ctx, history.RecordCounts{In: 5, Out: 4, DeadLettered: 1})
				switch calls {
				case 1:
					return nil
				case 2:
					return errors.New("dial redis://app:hunter2@db:6379 failed")
				default:
					return fmt.Errorf("write: %w", staleErr{})
				}
			}), nil
		},
	}
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger()), runtime.WithCoordinator(coord), runtime.WithWorkerID("w")).Register(sp)
	for range 3 {
		_ = pool.RunNow(context.Background())
	}
	runs, err := coord.RunHistory(context.Background(), "p", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs recorded, want 3", len(runs))
	}
	want := []history.Outcome{history.OutcomeStale, history.OutcomeFailed, history.OutcomeSucceeded}
	for i, r := range runs {
		if r.Outcome != want[i] {
			t.Errorf("run %d (newest first): outcome %s, want %s", i, r.Outcome, want[i])
		}
		if r.Records != (history.RecordCounts{In: 5, Out: 4, DeadLettered: 1}) || r.WorkerID != "w" || r.End.Before(r.Start) || !r.Triggered {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	if strings.Contains(runs[1].Error, "hunter2") || !strings.Contains(runs[1].Error, "redis://app:xxxxx@db") {
		t.Errorf("error text not redacted: %q", runs[1].Error)
	}
	if runs[2].Error != "" {
		t.Errorf("a success kept error %q", runs[2].Error)
	}
	if one, _ := coord.RunHistory(context.Background(), "p", 1); len(one) != 1 || one[0].Outcome != history.OutcomeStale {
		t.Errorf("limit 1: %+v", one)
	}
}

// TestLocalRunHistoryKeepsTheLimit: the coordinator keeps what its store
// keeps, the newest runs up to the store's limit.
func TestLocalRunHistoryKeepsTheLimit(t *testing.T) {
	coord := runtime.NewLocalCoordinator(nil, runtime.WithLocalRunHistory(history.New(history.Policy{Limit: 3})))
	n := 0
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 0 1 1 *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				n++
				runtime.CountRecords(ctx, history.RecordCounts{In: int64(n)})
				return nil
			}), nil
		}}
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger()), runtime.WithCoordinator(coord)).Register(sp)
	for range 5 {
		_ = pool.RunNow(context.Background())
	}
	runs, _ := coord.RunHistory(context.Background(), "p", 0)
	if len(runs) != 3 || runs[0].Records.In != 5 || runs[2].Records.In != 3 {
		t.Fatalf("ring of 3 after 5 runs: %+v", runs)
	}
}

// TestPoolGivenARunHistoryRecordsItsRuns: a pool without a coordinator
// keeps its runs, scheduled and run now, in the history it was given.
func TestPoolGivenARunHistoryRecordsItsRuns(t *testing.T) {
	clock := clocktest.NewFake(t0)
	m := history.New(history.Policy{})
	fail := false
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * * *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error {
				if fail {
					return errors.New("boom")
				}
				return nil
			}), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithRunHistory(m), runtime.WithWorkerID("w")}}
	d.start(t, sp)
	if got := d.pool.RunHistory(); got != m {
		t.Fatalf("RunHistory() = %v, want the store given", got)
	}
	advanceTo(t, clock, d, t0.Add(2*time.Second))
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	runs := m.Newest("p", 0, clock.Now())
	if len(runs) != 2 || runs[0].RunNumber != t0.Add(2*time.Second).Unix() || runs[1].RunNumber != t0.Add(time.Second).Unix() {
		t.Fatalf("scheduled runs kept: %+v", runs)
	}
	for _, r := range runs {
		if r.Outcome != history.OutcomeSucceeded || r.WorkerID != "w" || r.Triggered {
			t.Errorf("run %+v", r)
		}
	}

	// RunNow's coordinator keeps its runs in the same history.
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger()), runtime.WithRunHistory(m)).Register(
		&runtime.ScheduledPipeline{PipelineID: "q", Schedule: runtime.Once(), Factory: sp.Factory})
	fail = true
	_ = pool.RunNow(context.Background())
	if runs := m.Newest("q", 0, time.Now()); len(runs) != 1 || runs[0].Outcome != history.OutcomeFailed || runs[0].Error != "boom" || !runs[0].Triggered {
		t.Fatalf("run now kept: %+v", runs)
	}
}

// TestPoolWithoutRunHistoryKeepsNone: a bare pool, and a local
// coordinator not given a store, keep no run history: the coordinator
// then neither records nor reads runs back, and the runs still complete
// their slots.
func TestPoolWithoutRunHistoryKeepsNone(t *testing.T) {
	var none *history.Memory
	for _, opts := range [][]runtime.PoolOption{nil, {runtime.WithRunHistory(none)}} {
		if h := runtime.NewWorkerPool(opts...).RunHistory(); h != nil {
			t.Errorf("RunHistory() = %v, want nil", h)
		}
	}
	local := runtime.NewLocalCoordinator(nil, runtime.WithLocalRunHistory(none))
	if caps := local.Capabilities(); caps.RunRecorder != nil || caps.RunHistoryReader != nil {
		t.Fatalf("capabilities without a history: %+v", caps)
	}
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 0 1 1 *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}}
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger()), runtime.WithCoordinator(local)).Register(sp)
	if err := pool.RunNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if runs, err := local.RunHistory(context.Background(), "p", 0); err != nil || runs == nil || len(runs) != 0 {
		t.Fatalf("RunHistory without a store = %#v, %v; want none", runs, err)
	}
	if err := local.FinishRun(context.Background(), history.Record{PipelineID: "p", Outcome: history.OutcomeSucceeded}); err != nil {
		t.Fatalf("FinishRun without a store: %v", err)
	}
}
