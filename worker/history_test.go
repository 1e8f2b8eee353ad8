package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/worker"
)

// TestRunMainKeepsARunHistory: a worker whose code gave its pool no run
// history keeps its runs in memory, within the defaults; one given a
// store keeps that store.
func TestRunMainKeepsARunHistory(t *testing.T) {
	own := history.New(history.Policy{Limit: 7})
	for _, tc := range []struct {
		name  string
		given runtime.HistoryStore
		want  history.Policy
	}{
		{"none given", nil, history.Policy{Limit: history.DefaultLimit, MaxAge: history.DefaultMaxAge}},
		{"its own", own, own.Policy()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pool *runtime.WorkerPool
			var stderr syncBuffer
			code := worker.RunMain(context.Background(), nil, &stderr, func() (*runtime.WorkerPool, error) {
				pool = runtime.NewWorkerPool(runtime.WithSignalHandling(false), runtime.WithRunHistory(tc.given)).
					Register(&runtime.ScheduledPipeline{PipelineID: "once", Schedule: runtime.Once(), Factory: nopFactory})
				return pool, nil
			})
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			m, ok := pool.RunHistory().(*history.Memory)
			if !ok || (tc.given != nil && pool.RunHistory() != tc.given) {
				t.Fatalf("RunHistory() = %#v", pool.RunHistory())
			}
			if got := m.Policy(); got != tc.want {
				t.Errorf("policy %+v, want %+v", got, tc.want)
			}
			if runs := m.Newest("once", 0, time.Now()); len(runs) != 1 || runs[0].Outcome != history.OutcomeSucceeded {
				t.Errorf("runs kept: %+v", runs)
			}
		})
	}
}
