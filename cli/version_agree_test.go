package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/metrics"
	"github.com/agora-etl/agora/worker"
)

// Rule: `agora version`, a worker binary's version subcommand, the worker
// record in Redis and the agora_build_info metric print one version.
func TestEveryVersionAgrees(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"version"}, WithOutput(&out, &errb)); code != ExitOK {
		t.Fatalf("agora version: exit %d: %s", code, errb.String())
	}
	agora := firstMatch(t, "agora version", `^agora (\S+) \(`, out.String())

	out.Reset()
	if code := worker.RunMainTo(context.Background(), []string{"version"}, &out, &errb, nil); code != worker.ExitOK {
		t.Fatalf("worker version: exit %d: %s", code, errb.String())
	}
	workerVersion := firstMatch(t, "worker version", `(?m)^agora (\S+)$`, out.String())

	record := workerRecordVersion(t)
	metric := buildInfoVersion(t)

	if agora == "" || agora != workerVersion || agora != record || agora != metric {
		t.Fatalf("versions disagree: agora version %q, worker version %q, worker record %q, agora_build_info %q", agora, workerVersion, record, metric)
	}
	if agora != Version() || agora != runtime.Version() {
		t.Fatalf("agora version %q, cli.Version %q, runtime.Version %q", agora, Version(), runtime.Version())
	}
}

func firstMatch(t *testing.T, what, expr, s string) string {
	t.Helper()
	m := regexp.MustCompile(expr).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s printed %q, not matching %s", what, s, expr)
	}
	return m[1]
}

// workerRecordVersion registers a worker with a coordinator and reads its
// record back.
func workerRecordVersion(t *testing.T) string {
	t.Helper()
	mr := miniredis.RunT(t)
	c, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: "redis://" + mr.Addr(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, "w1", []string{"p"}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(ctx) }()
	workers, err := c.ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(workers) != 1 {
		t.Fatalf("workers: %+v", workers)
	}
	return workers[0].Version
}

// buildInfoVersion runs a pool and scrapes the version label of
// agora_build_info from its /metrics.
func buildInfoVersion(t *testing.T) string {
	t.Helper()
	pool := runtime.NewWorkerPool(runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.WithMetrics(metrics.New()))
	pool.Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Hour),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	deadline := time.Now().Add(10 * time.Second)
	for pool.HealthAddr() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the health server did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := http.Get("http://" + pool.HealthAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "agora_build_info{") {
			return firstMatch(t, "agora_build_info", `version="([^"]*)"`, strings.ReplaceAll(line, `go_version="`, `go="`))
		}
	}
	t.Fatalf("no agora_build_info in /metrics:\n%s", body)
	return ""
}
