package worker_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

// TestRunMainServesMetrics: a pool built with runtime alone serves no
// /metrics, and the worker entry gives it the Prometheus metrics every
// worker binary serves: agora_build_info, agora_runs_total counting the
// runs so far, and the collectors given with WithCollectors.
func TestRunMainServesMetrics(t *testing.T) {
	var poolPtr atomic.Pointer[runtime.WorkerPool]
	var runs atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var stderr syncBuffer
	given := prometheus.NewCounter(prometheus.CounterOpts{Name: "agora_test_entry_total", Help: "a collector given to the entry"})
	go func() {
		done <- worker.RunMain(ctx, []string{"-health-addr", "127.0.0.1:0"}, &stderr, func() (*runtime.WorkerPool, error) {
			pool := runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
				Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Hour), Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(context.Context) error {
						runs.Add(1)
						return errors.New("boom")
					}), nil
				}})
			if pool.Metrics() != nil {
				t.Error("a pool built with runtime alone has metrics")
			}
			poolPtr.Store(pool)
			return pool, nil
		}, worker.WithCollectors(given))
	}()
	var body string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if p := poolPtr.Load(); p != nil && p.HealthAddr() != "" && runs.Load() > 0 {
			code, b := get(t, p.HealthAddr(), "/metrics")
			if code != 200 {
				t.Fatalf("/metrics = %d\n%s", code, b)
			}
			if body = b; strings.Contains(body, `agora_runs_total{pipeline="p",status="error"} 1`) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, want := range []string{
		`agora_build_info{go_version="`,
		`agora_runs_total{pipeline="p",status="error"} 1`,
		`agora_runs_total{pipeline="p",status="success"} 0`,
		`agora_run_duration_seconds_count{pipeline="p"} 1`,
		"agora_test_entry_total 0",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q:\n%s", want, body)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunMain did not return")
	}
}
