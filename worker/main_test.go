package worker_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/syncbuf"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

// lockedBuffer collects logs written from several goroutines.
type lockedBuffer = syncbuf.Buffer

func oncePool(id string) func() (*runtime.WorkerPool, error) {
	return func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false), runtime.WithWorkerID("w-"+id)).
			Register(&runtime.ScheduledPipeline{PipelineID: id, Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
			}}), nil
	}
}

// TestRunMainServesTheEntry: the subcommands, the fleet command among
// them, and the exit statuses RunMain documents.
func TestRunMainServesTheEntry(t *testing.T) {
	var stdout, stderr lockedBuffer
	if code := worker.RunMainTo(context.Background(), []string{"pipelines"}, &stdout, &stderr, oncePool("listed")); code != worker.ExitOK {
		t.Fatalf("pipelines: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "listed") {
		t.Errorf("pipelines does not list the pool's pipeline:\n%s", stdout.String())
	}
	if code := worker.RunMainTo(context.Background(), []string{"-log-format", "yaml"}, &stdout, &stderr, oncePool("p")); code != worker.ExitFailure {
		t.Errorf("a bad -log-format: exit %d, want %d", code, worker.ExitFailure)
	}
	if code := worker.RunMainTo(context.Background(), []string{"run"}, &stdout, &stderr, oncePool("p")); code != worker.ExitUsage {
		t.Errorf("run with no pipeline: exit %d, want %d", code, worker.ExitUsage)
	}
	var fleetOut lockedBuffer
	if code := worker.RunMainTo(context.Background(), []string{"fleet", "help"}, &fleetOut, &fleetOut, oncePool("p")); code != worker.ExitOK || !strings.Contains(fleetOut.String(), "workers") {
		t.Errorf("fleet help: exit %d, want the fleet command's help:\n%s", code, fleetOut.String())
	}
}

// TestWhatPipelinesImportLinksNoGRPC keeps runtime light: what generated
// worker.go files import (runtime, runtime/distributed) pulls in no gRPC
// and no exporter; the worker entry links the OTLP exporter, except when
// built with -tags agora_nootlp.
func TestWhatPipelinesImportLinksNoGRPC(t *testing.T) {
	deps := func(t *testing.T, args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list", "-deps"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %v: %v\n%s", args, err, out)
		}
		return strings.Fields(string(out))
	}
	heavy := func(pkgs []string) []string {
		var found []string
		for _, p := range pkgs {
			if strings.HasPrefix(p, "google.golang.org/grpc") || strings.HasPrefix(p, "go.opentelemetry.io/otel/exporters/") {
				found = append(found, p)
			}
		}
		return found
	}
	for _, args := range [][]string{
		{"github.com/agora-etl/agora/runtime", "github.com/agora-etl/agora/runtime/distributed"},
		{"-tags", "agora_nootlp", "github.com/agora-etl/agora/worker"},
	} {
		if found := heavy(deps(t, args...)); len(found) > 0 {
			t.Errorf("go list -deps %v pulls in %d heavy packages, first %s", args, len(found), found[0])
		}
	}
	var exporter bool
	for _, p := range deps(t, "github.com/agora-etl/agora/worker") {
		exporter = exporter || p == "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	}
	if !exporter {
		t.Error("the worker entry does not link the OTLP exporter")
	}
}
