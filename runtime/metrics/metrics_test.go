package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
	"github.com/agora-etl/agora/runtime/notify"
)

// families returns the names of what g serves.
func families(t *testing.T, g prometheus.Gatherer) map[string]bool {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
	}
	return names
}

// TestWithCollectorsServesThem: a collector given to the metrics is
// served, also one added once the registry is made; none is there unless
// given.
func TestWithCollectorsServesThem(t *testing.T) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "agora_test_given_total", Help: "a collector given to the metrics"})
	if !families(t, metrics.New(metrics.WithCollectors(c, nil)).Gatherer())["agora_test_given_total"] {
		t.Error("metrics given the collector do not serve it")
	}
	m := metrics.New()
	if families(t, m.Gatherer())["agora_test_given_total"] {
		t.Error("metrics not given the collector serve it")
	}
	m.Add(c)
	if !families(t, m.Gatherer())["agora_test_given_total"] {
		t.Error("a collector added after the first scrape is not served")
	}
}

// TestUnboundMetricsServeTheProcess: metrics given to no pool serve the
// build, the in-process coordinator and the Go and process collectors.
func TestUnboundMetricsServeTheProcess(t *testing.T) {
	got := families(t, metrics.New().Gatherer())
	for _, name := range []string{"agora_build_info", "agora_coordinator_up", "go_goroutines", "process_start_time_seconds"} {
		if !got[name] {
			t.Errorf("no %s", name)
		}
	}
}

// TestPoolServesItsRunsAndNotifier runs a pool given metrics and a
// webhook: /metrics has the pipeline's runs and histograms and the
// webhook's counts.
func TestPoolServesItsRunsAndNotifier(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	wh, err := notify.New(notify.Options{URL: srv.URL, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	pool := runtime.NewWorkerPool(runtime.WithMetrics(m), runtime.WithNotifier(wh), runtime.WithShutdownHook(wh.Close),
		runtime.WithSignalHandling(false), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	pool.Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), MaxConsecutiveErrors: 1,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return errors.New("boom") }), nil
		}})
	if pool.Metrics() != runtime.Metrics(m) {
		t.Fatal("the pool does not return the metrics it was given")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.Run(ctx); !errors.Is(err, runtime.ErrTooManyErrors) {
		t.Fatalf("Run = %v, want the pipeline stopped after its failure", err)
	}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`agora_runs_total{pipeline="p",status="error"} `,
		`agora_run_duration_seconds_count{pipeline="p"} `,
		"agora_notify_sent_total ",
		"agora_notify_failures_total ",
		"agora_notify_dropped_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q:\n%s", want, body)
		}
	}
}
