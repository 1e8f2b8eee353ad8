//go:build !agora_nootlp

package worker_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agora-etl/agora/internal/otlptest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/tracing"
	"github.com/agora-etl/agora/worker"
)

// recording returns a provider that records every span it ends.
func recording() (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), rec
}

// onlySpan returns the one span named name.
func onlySpan(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var got []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d spans named %q among %d, want 1", len(got), name, len(spans))
	}
	return got[0]
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func onceFactory(fn func(context.Context) error) runtime.Factory {
	return func(context.Context) (runtime.Pipeline, error) { return runtime.PipelineFunc(fn), nil }
}

// TestRunMainExportsOverOTLPFromTheEnvironment is the generated worker's
// path end to end: no tracing code, OTEL_EXPORTER_OTLP_ENDPOINT pointing at
// a real OTLP/HTTP receiver, and the spans arriving there by the time
// RunMain returns.
func TestRunMainExportsOverOTLPFromTheEnvironment(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL())
	t.Setenv(tracing.EnvTracesEndpoint, "")
	t.Setenv(tracing.EnvServiceName, "gen-worker")
	var stderr syncBuffer
	code := worker.RunMain(context.Background(), nil, &stderr, func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false), runtime.WithWorkerID("w-otlp")).
			Register(&runtime.ScheduledPipeline{PipelineID: "orders", Schedule: runtime.Once(), Factory: onceFactory(func(ctx context.Context) error {
				runtime.CountRecords(ctx, history.RecordCounts{In: 5, Out: 4, DeadLettered: 1})
				_, s := trace.SpanFromContext(ctx).TracerProvider().Tracer("etl").Start(ctx, "agora.sink.write")
				s.End()
				return nil
			})}), nil
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), `msg="tracing runs over OTLP" service_name=gen-worker`) {
		t.Errorf("no log line says where spans go:\n%s", stderr.String())
	}
	var run, child *otlptest.Span
	spans := rcv.Spans()
	for i := range spans {
		switch spans[i].Name {
		case runtime.RunSpanName:
			run = &spans[i]
		case "agora.sink.write":
			child = &spans[i]
		}
	}
	if run == nil || child == nil || len(spans) != 2 {
		t.Fatalf("received %+v, want the run span and its child", spans)
	}
	want := map[string]any{
		"agora.pipeline.id":           "orders",
		"agora.run.number":            int64(-1),
		"agora.fencing_token":         int64(0), // local leases are unfenced
		"agora.worker.id":             "w-otlp",
		"agora.records.in":            int64(5),
		"agora.records.out":           int64(4),
		"agora.records.dead_lettered": int64(1),
		"agora.records.filtered":      int64(0),
		"agora.run.status":            "success",
	}
	for k, v := range want {
		if run.Attributes[k] != v {
			t.Errorf("%s = %v (%T), want %v", k, run.Attributes[k], run.Attributes[k], v)
		}
	}
	if run.Resource["service.name"] != "gen-worker" {
		t.Errorf("service.name %v", run.Resource["service.name"])
	}
	if child.ParentSpanID != run.SpanID || child.TraceID != run.TraceID {
		t.Errorf("child %+v not under run %+v", child, run)
	}
}

func TestRunMainKeepsThePoolsProviderOverTheEnvironment(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL())
	tp, rec := recording()
	var stderr syncBuffer
	code := worker.RunMain(context.Background(), nil, &stderr, func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false), runtime.WithTracerProvider(tp)).
			Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: nopFactory}), nil
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	onlySpan(t, rec.Ended(), runtime.RunSpanName)
	if n := rcv.Requests(); n != 0 {
		t.Errorf("%d export requests reached the environment's endpoint", n)
	}
}

func TestRunMainWithoutAnEndpointDoesNotTrace(t *testing.T) {
	t.Setenv(tracing.EnvEndpoint, "")
	t.Setenv(tracing.EnvTracesEndpoint, "")
	var traced atomic.Bool
	var stderr syncBuffer
	code := worker.RunMain(context.Background(), nil, &stderr, func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: onceFactory(func(ctx context.Context) error {
				traced.Store(trace.SpanFromContext(ctx).IsRecording())
				return nil
			})}), nil
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if traced.Load() {
		t.Error("the run was traced without a provider or an endpoint")
	}
	if strings.Contains(stderr.String(), "tracing") {
		t.Errorf("a worker that never asked for tracing logs about it:\n%s", stderr.String())
	}
}

func TestRunMainHonoursOTELSDKDisabled(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL())
	t.Setenv(tracing.EnvSDKDisabled, "true")
	var stderr syncBuffer
	code := worker.RunMain(context.Background(), nil, &stderr, func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: nopFactory}), nil
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if n := rcv.Requests(); n != 0 {
		t.Errorf("%d export requests although %s=true", n, tracing.EnvSDKDisabled)
	}
}

// TestNoopProviderOptsOut: a pool with the no-op provider is not traced
// from the environment by RunMain; its pipeline's own provider still is.
func TestNoopProviderOptsOut(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL())
	tp, rec := recording()
	var stderr syncBuffer
	code := worker.RunMain(context.Background(), nil, &stderr, func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false), runtime.WithTracerProvider(noop.NewTracerProvider())).
			Register(&runtime.ScheduledPipeline{PipelineID: "traced", Schedule: runtime.Once(), Factory: nopFactory, TracerProvider: tp}).
			Register(&runtime.ScheduledPipeline{PipelineID: "untraced", Schedule: runtime.Once(), Factory: nopFactory}), nil
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	run := onlySpan(t, rec.Ended(), runtime.RunSpanName)
	if id := spanAttrs(run)[runtime.AttrPipelineID].AsString(); id != "traced" {
		t.Errorf("traced %q", id)
	}
	if n := rcv.Requests(); n != 0 {
		t.Errorf("%d export requests: the no-op pool provider did not keep the environment's out", n)
	}
}
