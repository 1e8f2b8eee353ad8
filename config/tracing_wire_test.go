package config

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

// otlpReceiver is an OTLP/HTTP endpoint that keeps what it is sent.
type otlpReceiver struct {
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
	types  []string
}

func startReceiver(t *testing.T) (*otlpReceiver, string) {
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.paths = append(r.paths, req.URL.Path)
		r.types = append(r.types, req.Header.Get("Content-Type"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *otlpReceiver) received() (n int, all []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies), bytes.Join(r.bodies, nil)
}

// traceDoc has three pipelines: two traced alike, one not.
const traceDoc = `format = "agora/v1"
[pipelines.a]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
tracing = { enabled = true, service_name = "svc-traced", exporter = "%s" }
[pipelines.b]
source = { type = "iterable", records = [{id = 2}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
tracing = { enabled = true, service_name = "svc-traced", exporter = "%s" }
[pipelines.c]
source = { type = "iterable", records = [{id = 3}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
tracing = { enabled = false, service_name = "svc-untraced" }
`

func parseTraceDoc(t *testing.T, exporter string, out *testOutputs) *File {
	t.Helper()
	doc := strings.ReplaceAll(traceDoc, "%s", exporter)
	f, err := Parse("t.toml", []byte(doc), WithRegistry(testRegistry(out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestWireTracingSharesProvidersAndSkipsDisabledPipelines(t *testing.T) {
	var out testOutputs
	f := parseTraceDoc(t, "otlp", &out)
	sps := f.ScheduledPipelines()
	opts, err := f.wireTracing(context.Background(), sps)
	if err != nil {
		t.Fatal(err)
	}
	if sps[0].TracerProvider == nil || sps[0].TracerProvider != sps[1].TracerProvider {
		t.Errorf("a and b should share one provider: %v, %v", sps[0].TracerProvider, sps[1].TracerProvider)
	}
	if sps[2].TracerProvider != nil {
		t.Errorf("c has tracing disabled but a provider")
	}
	// The pool's no-op provider and one shutdown hook for the one provider.
	if len(opts) != 2 {
		t.Errorf("%d pool options, want 2", len(opts))
	}
}

func TestWireTracingWithNowhereToSendSpans(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	var out testOutputs
	f := loadExample(t, &out)
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	sps := f.ScheduledPipelines()
	if _, err := f.wireTracing(context.Background(), sps); err != nil {
		t.Fatal(err)
	}
	if sps[0].TracerProvider != nil {
		t.Errorf("a provider was built with no exporter and no endpoint")
	}
	if got := logs.String(); strings.Count(got, "spans are not exported") != 1 || !strings.Contains(got, "service_name=orders-worker") {
		t.Errorf("log = %q, want one INFO line saying spans go nowhere", got)
	}
}

func TestTracedRunsReachAnOTLPReceiver(t *testing.T) {
	recv, url := startReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	var out testOutputs
	f := parseTraceDoc(t, "otlp", &out)
	pool, err := f.Pool(runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Once pipelines: Run returns when all three succeeded, after the
	// providers were flushed and shut down.
	if err := pool.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	n, body := recv.received()
	if n == 0 {
		t.Fatal("the OTLP receiver got nothing")
	}
	for i := range recv.paths {
		if recv.paths[i] != "/v1/traces" || recv.types[i] != "application/x-protobuf" {
			t.Errorf("request %d: %s %s", i, recv.paths[i], recv.types[i])
		}
	}
	// Protobuf keeps strings as they are: the traced pipelines' service
	// and span names are there, the untraced pipeline's are not.
	for _, want := range []string{"svc-traced", "agora.run"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("exported spans lack %q", want)
		}
	}
	if bytes.Contains(body, []byte("svc-untraced")) {
		t.Errorf("the pipeline without tracing was traced")
	}
	if got := out.stdout.String(); strings.Count(got, "\n") != 3 {
		t.Errorf("stdout = %q, want three records", got)
	}
}

func TestUntracedConfigWorkerIgnoresTheOTLPEnvironment(t *testing.T) {
	recv, url := startReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	var out testOutputs
	doc := `format = "agora/v1"
[pipelines.c]
source = { type = "iterable", records = [{id = 3}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`
	f, err := Parse("u.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code := worker.RunMain(ctx, []string{"-health-port", "0"}, &stderr, func() (*runtime.WorkerPool, error) {
		return f.Pool(runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false))
	})
	if code != worker.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n, _ := recv.received(); n != 0 {
		t.Errorf("%d OTLP requests from a worker whose file enables no tracing", n)
	}
	if strings.Contains(stderr.String(), "tracing runs over OTLP") {
		t.Errorf("RunMain set up tracing: %s", stderr.String())
	}
}
