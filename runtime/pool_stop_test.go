package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// onLogHandler calls fn for every log record whose message starts with
// prefix: a hook into a precise point of Run's startup.
type onLogHandler struct {
	prefix string
	fn     func()
}

func (h onLogHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h onLogHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.fn()
	}
	return nil
}
func (h onLogHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onLogHandler) WithGroup(string) slog.Handler      { return h }

// TestStopBetweenStartupAddsKeepsTheOthersScheduled stops one pipeline
// while Run is still putting the others on the schedule (the warning Run
// logs for a schedule that never fires comes from that step). Run must go
// on with the rest: not return "every pipeline finished", and not panic
// when it stops them at shutdown.
func TestStopBetweenStartupAddsKeepsTheOthersScheduled(t *testing.T) {
	never := runtime.NeverFiringCron()
	a := &runtime.ScheduledPipeline{PipelineID: "a", Schedule: never, Factory: nopFactory}
	b := &runtime.ScheduledPipeline{PipelineID: "b", Schedule: never, Factory: nopFactory}
	var once sync.Once
	logger := slog.New(onLogHandler{prefix: "schedule never fires", fn: func() { once.Do(a.Stop) }})
	pool := runtime.NewWorkerPool(runtime.WithLogger(logger), runtime.WithSignalHandling(false)).Register(a).Register(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runAsync(pool, ctx)
	waitClosed(t, pool.Started(), "the pool to start")

	states := map[string]runtime.PipelineState{}
	for _, p := range pool.Status().Pipelines {
		states[p.PipelineID] = p.State
	}
	if states["a"] != runtime.StateStopped || states["b"] == runtime.StateStopped {
		t.Fatalf("states %v; want a stopped and b still scheduled", states)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned with pipeline b still scheduled: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}

// TestStopEveryPipelineDuringStartup stops all pipelines from another
// goroutine while Run is starting them, as a program reacting to its own
// shutdown signal would. Whatever the interleaving, Run ends cleanly.
func TestStopEveryPipelineDuringStartup(t *testing.T) {
	for range 20 {
		pool := quietPool()
		var sps []*runtime.ScheduledPipeline
		for i := range 200 {
			sp := &runtime.ScheduledPipeline{PipelineID: fmt.Sprint("p", i), Schedule: runtime.MustCron("0 0 1 1 *"), Factory: nopFactory}
			sps = append(sps, sp)
			pool.Register(sp)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for !sps[len(sps)-1].Running() {
				time.Sleep(10 * time.Microsecond)
			}
			for _, sp := range sps {
				sp.Stop()
			}
		}()
		done := runAsync(pool, ctx)
		waitClosed(t, pool.Started(), "the pool to start")
		cancel()
		if err := waitErr(t, done); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
}

// TestStopBeforeScheduledEndsThePipeline stops the only pipeline while the
// coordinator is still starting, before Run has put it on the schedule: it
// must not be scheduled anyway, and Run ends since nothing is left to run.
func TestStopBeforeScheduledEndsThePipeline(t *testing.T) {
	coord := newFakeCoord()
	coord.startGate = make(chan struct{})
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 0 1 1 *"), Factory: nopFactory}
	pool := quietPool(runtime.WithCoordinator(coord)).Register(sp)
	done := runAsync(pool, context.Background())
	for !sp.Running() {
		time.Sleep(time.Millisecond)
	}
	sp.Stop()
	close(coord.startGate)
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestNoRunStartsAfterStopDuringLeaseRequest stops a pipeline while its
// lease request is in flight. Once the lease arrives the run must not
// start: the lease goes back instead.
func TestNoRunStartsAfterStopDuringLeaseRequest(t *testing.T) {
	coord := newFakeCoord()
	asking, grant := make(chan struct{}), make(chan struct{})
	var once sync.Once
	coord.decide = func(string, int64) (bool, error) {
		once.Do(func() { close(asking) })
		<-grant
		return true, nil
	}
	var built atomic.Int32
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: func(ctx context.Context) (runtime.Pipeline, error) {
		built.Add(1)
		return nopFactory(ctx)
	}}
	pool := quietPool(runtime.WithCoordinator(coord)).Register(sp)
	done := runAsync(pool, context.Background())
	waitClosed(t, asking, "the lease request")
	sp.Stop()
	close(grant)
	if err := waitErr(t, done); err != nil { // its only pipeline is stopped
		t.Fatalf("Run: %v", err)
	}
	if n := built.Load(); n != 0 {
		t.Fatalf("the factory ran %d time(s) after Stop", n)
	}
	if calls := coord.callLog(); !slices.Contains(calls, "release p") {
		t.Fatalf("the lease granted after Stop was not given back: %q", calls)
	}
}
