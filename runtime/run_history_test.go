package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// staleErr carries its own outcome, as fencing's StaleWriterError does.
type staleErr struct{}

func (staleErr) Error() string                  { return "refused" }
func (staleErr) RunOutcome() runtime.RunOutcome { return runtime.OutcomeStale }

func TestLocalRunHistoryKeepsEveryRunInMemory(t *testing.T) {
	coord := runtime.NewLocalCoordinator(nil)
	calls := 0
	sp := &runtime.ScheduledPipeline{
		PipelineID: "p",
		Schedule:   runtime.MustCron("0 0 1 1 *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				calls++
				runtime.CountRecords(ctx, runtime.RecordCounts{In: 5, Out: 4, DeadLettered: 1})
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
	want := []runtime.RunOutcome{runtime.OutcomeStale, runtime.OutcomeFailed, runtime.OutcomeSucceeded}
	for i, r := range runs {
		if r.Outcome != want[i] {
			t.Errorf("run %d (newest first): outcome %s, want %s", i, r.Outcome, want[i])
		}
		if r.Records != (runtime.RecordCounts{In: 5, Out: 4, DeadLettered: 1}) || r.WorkerID != "w" || r.End.Before(r.Start) || !r.Triggered {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	if strings.Contains(runs[1].Error, "hunter2") || !strings.Contains(runs[1].Error, "redis://app:xxxxx@db") {
		t.Errorf("error text not redacted: %q", runs[1].Error)
	}
	if runs[2].Error != "" {
		t.Errorf("a success kept error %q", runs[2].Error)
	}
	if one, _ := coord.RunHistory(context.Background(), "p", 1); len(one) != 1 || one[0].Outcome != runtime.OutcomeStale {
		t.Errorf("limit 1: %+v", one)
	}
}

func TestLocalRunHistoryRingAndOff(t *testing.T) {
	coord := runtime.NewLocalCoordinator(nil)
	coord.SetRunHistory(runtime.RunHistoryPolicy{Limit: 3})
	n := 0
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 0 1 1 *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				n++
				runtime.CountRecords(ctx, runtime.RecordCounts{In: int64(n)})
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
	coord.SetRunHistory(runtime.RunHistoryPolicy{Off: true})
	_ = pool.RunNow(context.Background())
	if runs, _ := coord.RunHistory(context.Background(), "p", 0); len(runs) != 0 {
		t.Errorf("history off: %d runs kept", len(runs))
	}
}

func TestParseRunHistory(t *testing.T) {
	for in, want := range map[string]runtime.RunHistoryPolicy{
		"":         {Limit: 100, MaxAge: 168 * time.Hour},
		"100,168h": {Limit: 100, MaxAge: 168 * time.Hour},
		"20":       {Limit: 20, MaxAge: 168 * time.Hour},
		" 5 , 1h ": {Limit: 5, MaxAge: time.Hour},
		"off":      {Off: true},
		"0":        {Off: true},
	} {
		got, err := runtime.ParseRunHistory(in)
		if err != nil || got != want {
			t.Errorf("ParseRunHistory(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"many", "-1", "10,soon", "10,-1h"} {
		if _, err := runtime.ParseRunHistory(in); !errors.Is(err, runtime.ErrBadRunHistory) || !strings.Contains(err.Error(), "RUNS[,MAX_AGE]") {
			t.Errorf("ParseRunHistory(%q) error = %v", in, err)
		}
	}
}

func TestLocalRunHistoryLimitLoweredKeepsTheNewest(t *testing.T) {
	coord := runtime.NewLocalCoordinator(nil)
	n := 0
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 0 1 1 *"),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				n++
				runtime.CountRecords(ctx, runtime.RecordCounts{In: int64(n)})
				return nil
			}), nil
		}}
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger()), runtime.WithCoordinator(coord)).Register(sp)
	for range 6 {
		_ = pool.RunNow(context.Background())
	}
	coord.SetRunHistory(runtime.RunHistoryPolicy{Limit: 2})
	_ = pool.RunNow(context.Background())
	_ = pool.RunNow(context.Background())
	runs, _ := coord.RunHistory(context.Background(), "p", 0)
	if len(runs) != 2 || runs[0].Records.In != 8 || runs[1].Records.In != 7 {
		t.Fatalf("after lowering the limit to 2: %+v", runs)
	}
}
