package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// TestConfigureAddsToAPoolUntilItRuns: options given after NewWorkerPool
// apply until the pool runs, and are refused afterwards.
func TestConfigureAddsToAPoolUntilItRuns(t *testing.T) {
	pool := quietPool().Register(&runtime.ScheduledPipeline{PipelineID: "once", Schedule: runtime.Once(), Factory: nopFactory})
	if err := pool.Configure(runtime.WithWorkerID("configured"), nil); err != nil {
		t.Fatal(err)
	}
	if id := pool.WorkerID(); id != "configured" {
		t.Fatalf("WorkerID %q, want configured", id)
	}
	if got := pool.Pipelines(); len(got) != 1 || got[0].PipelineID != "once" {
		t.Fatalf("Pipelines %v", got)
	}
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := pool.Configure(runtime.WithWorkerID("late")); !errors.Is(err, runtime.ErrAlreadyRunning) || pool.WorkerID() != "configured" {
		t.Fatalf("Configure after Run: %v, worker id %q", err, pool.WorkerID())
	}
}

// TestWithHealthHostKeepsThePort: the host moves, the configured port stays;
// without a port the pool refuses to run.
func TestWithHealthHostKeepsThePort(t *testing.T) {
	pool := quietPool(runtime.WithHealthPort(0), runtime.WithHealthHost("127.0.0.1")).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: nopFactory})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	addr := waitAddr(t, pool)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("health server on %q, want loopback", addr)
	}

	err := quietPool(runtime.WithHealthHost("127.0.0.1")).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: nopFactory}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "names no port") {
		t.Fatalf("Run with a host and no port = %v", err)
	}
}
