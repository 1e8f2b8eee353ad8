package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// recording returns a provider whose ended spans the recorder keeps.
func recording() (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), rec
}

// buffered returns a provider that exports only when flushed (or after an
// hour), to the returned in-memory exporter.
func buffered() (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Hour))), exp
}

// snapshots returns what exp has exported, as read-only spans.
func snapshots(exp *tracetest.InMemoryExporter) []sdktrace.ReadOnlySpan {
	return exp.GetSpans().Snapshots()
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func spansNamed(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func onlySpan(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := spansNamed(spans, name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q among %d, want 1", len(got), name, len(spans))
	}
	return got[0]
}

func onceFactory(fn func(context.Context) error) runtime.Factory {
	return func(context.Context) (runtime.Pipeline, error) { return runtime.PipelineFunc(fn), nil }
}

// releaseTimer is a fakeCoord that notes when a lease was given back.
type releaseTimer struct {
	*fakeCoord
	at atomic.Int64
}

func (c *releaseTimer) ReleaseLease(ctx context.Context, id string) error {
	c.at.Store(time.Now().UnixNano())
	return c.fakeCoord.ReleaseLease(ctx, id)
}

func (c *releaseTimer) CompleteLease(ctx context.Context, id string) error {
	c.at.Store(time.Now().UnixNano())
	return c.fakeCoord.CompleteLease(ctx, id)
}

func TestRunSpanCarriesTheRunAndNestsChildSpans(t *testing.T) {
	tp, rec := recording()
	coord := &releaseTimer{fakeCoord: newFakeCoord()}
	var sameInDerived atomic.Bool
	var ranAt atomic.Int64
	pool := quietPool(runtime.WithCoordinator(coord), runtime.WithWorkerID("w1"), runtime.WithTracerProvider(tp)).
		Register(&runtime.ScheduledPipeline{PipelineID: "orders", Schedule: runtime.Once(), Factory: onceFactory(func(ctx context.Context) error {
			ranAt.Store(time.Now().UnixNano())
			runtime.CountRecords(ctx, history.RecordCounts{In: 3, Out: 2})
			runtime.CountRecords(ctx, history.RecordCounts{DeadLettered: 1})
			// What a record pipeline does for its source and sinks.
			_, child := trace.SpanFromContext(ctx).TracerProvider().Tracer("etl").Start(ctx, "agora.source.read")
			child.End()
			// Contexts derived from the run's (through its lazy
			// cancellation layer) carry the same span.
			derived, cancel := context.WithCancel(ctx)
			defer cancel()
			sameInDerived.Store(trace.SpanFromContext(derived).SpanContext().Equal(trace.SpanFromContext(ctx).SpanContext()))
			return nil
		})})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	run := onlySpan(t, spans, runtime.RunSpanName)
	child := onlySpan(t, spans, "agora.source.read")

	if !child.Parent().Equal(run.SpanContext()) || child.SpanContext().TraceID() != run.SpanContext().TraceID() {
		t.Errorf("child's parent %v, want the run span %v", child.Parent(), run.SpanContext())
	}
	if run.Parent().IsValid() {
		t.Errorf("run span has a parent %v; the pool's context carries none", run.Parent())
	}
	if !sameInDerived.Load() {
		t.Error("a context derived from the run's does not carry the run span")
	}
	want := map[attribute.Key]attribute.Value{
		runtime.AttrPipelineID:          attribute.StringValue("orders"),
		runtime.AttrRunNumber:           attribute.Int64Value(-1), // a Once run's number
		runtime.AttrFencingToken:        attribute.Int64Value(101),
		runtime.AttrWorkerID:            attribute.StringValue("w1"),
		runtime.AttrRecordsIn:           attribute.Int64Value(3),
		runtime.AttrRecordsOut:          attribute.Int64Value(2),
		runtime.AttrRecordsDeadLettered: attribute.Int64Value(1),
		runtime.AttrRecordsFiltered:     attribute.Int64Value(0),
		runtime.AttrRunStatus:           attribute.StringValue(runtime.RunStatusSuccess),
	}
	got := spanAttrs(run)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k].String(), v.String())
		}
	}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want exactly %v", got, want)
	}
	if run.Status().Code != codes.Unset || len(run.Events()) != 0 {
		t.Errorf("a successful run has status %v and events %v", run.Status(), run.Events())
	}
	// The span covers the run and the lease's completion.
	if !run.StartTime().Before(time.Unix(0, ranAt.Load())) {
		t.Errorf("span started %v, after the run did %v", run.StartTime(), time.Unix(0, ranAt.Load()))
	}
	if released := time.Unix(0, coord.at.Load()); coord.at.Load() == 0 || run.EndTime().Before(released) {
		t.Errorf("span ended %v, before the lease was completed %v", run.EndTime(), released)
	}
}

func TestRunSpanRecordsTheOutcome(t *testing.T) {
	cases := []struct {
		name    string
		run     func(context.Context) error
		status  string
		message string
		stack   bool
	}{
		{"error", func(context.Context) error { return errors.New("db down") }, runtime.RunStatusError, "db down", false},
		{"panic", func(context.Context) error { panic("boom") }, runtime.RunStatusPanic, "panic in Run: boom", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp, rec := recording()
			pool := quietPool(runtime.WithTracerProvider(tp)).
				Register(&runtime.ScheduledPipeline{PipelineID: c.name, Schedule: runtime.Once(), MaxConsecutiveErrors: 1, Factory: onceFactory(c.run)})
			if err := pool.Run(context.Background()); err == nil {
				t.Fatal("the failed run's terminal error is missing")
			}
			run := onlySpan(t, rec.Ended(), runtime.RunSpanName)
			if got := spanAttrs(run)[runtime.AttrRunStatus].AsString(); got != c.status {
				t.Errorf("status attribute %q, want %q", got, c.status)
			}
			if run.Status().Code != codes.Error || run.Status().Description != c.message {
				t.Errorf("span status %+v, want Error %q", run.Status(), c.message)
			}
			events := run.Events()
			if len(events) != 1 || events[0].Name != "exception" {
				t.Fatalf("events %+v, want one exception", events)
			}
			ev := map[attribute.Key]attribute.Value{}
			for _, kv := range events[0].Attributes {
				ev[kv.Key] = kv.Value
			}
			if ev["exception.message"].AsString() != c.message {
				t.Errorf("exception.message %q", ev["exception.message"].AsString())
			}
			if stack := ev["exception.stacktrace"].AsString(); c.stack != strings.Contains(stack, "panic") {
				t.Errorf("stack trace %q (want one: %v)", stack, c.stack)
			}
		})
	}
}

func TestRunSpanOfACancelledRun(t *testing.T) {
	tp, rec := recording()
	started := make(chan struct{})
	pool := quietPool(runtime.WithTracerProvider(tp), runtime.WithGracefulShutdownTimeout(10*time.Millisecond)).
		Register(&runtime.ScheduledPipeline{PipelineID: "stuck", Schedule: runtime.Continuous(), Factory: onceFactory(func(ctx context.Context) error {
			close(started)
			<-ctx.Done() // ignores ShutdownRequested: the graceful timeout cancels it
			return ctx.Err()
		})})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	<-started
	cancel()
	if err := waitErr(t, done); !errors.Is(err, runtime.ErrGracefulTimeout) {
		t.Fatalf("Run = %v, want the graceful timeout", err)
	}
	run := onlySpan(t, rec.Ended(), runtime.RunSpanName)
	if got := spanAttrs(run)[runtime.AttrRunStatus].AsString(); got != runtime.RunStatusCancelled {
		t.Errorf("status attribute %q, want cancelled", got)
	}
	if run.Status().Code != codes.Error || !strings.Contains(run.Status().Description, runtime.ErrGracefulTimeout.Error()) {
		t.Errorf("span status %+v", run.Status())
	}
}

func TestRunSpanIsAChildOfTheSpanInRunsContext(t *testing.T) {
	tp, rec := recording()
	outer, outerRec := recording()
	ctx, parent := outer.Tracer("caller").Start(context.Background(), "agora run")
	pool := quietPool(runtime.WithTracerProvider(tp)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: nopFactory})
	if err := pool.Run(ctx); err != nil {
		t.Fatal(err)
	}
	parent.End()
	run := onlySpan(t, rec.Ended(), runtime.RunSpanName)
	if !run.Parent().Equal(parent.SpanContext()) {
		t.Errorf("run span's parent %v, want the caller's span %v", run.Parent(), parent.SpanContext())
	}
	if n := len(outerRec.Ended()); n != 1 {
		t.Errorf("the caller's provider got %d spans, want only its own", n)
	}
}

func TestPipelineTracerProviderOverridesThePools(t *testing.T) {
	poolTP, poolRec := recording()
	ownTP, ownRec := recording()
	pool := quietPool(runtime.WithTracerProvider(poolTP)).
		Register(&runtime.ScheduledPipeline{PipelineID: "shared", Schedule: runtime.Once(), Factory: nopFactory}).
		Register(&runtime.ScheduledPipeline{PipelineID: "own", Schedule: runtime.Once(), Factory: nopFactory, TracerProvider: ownTP})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for rec, want := range map[*tracetest.SpanRecorder]string{poolRec: "shared", ownRec: "own"} {
		run := onlySpan(t, rec.Ended(), runtime.RunSpanName)
		if got := spanAttrs(run)[runtime.AttrPipelineID].AsString(); got != want {
			t.Errorf("provider meant for %q traced %q", want, got)
		}
	}
}

func TestSpansAreFlushedAndHooksRunAtTheEndOfRun(t *testing.T) {
	poolTP, poolExp := buffered()
	ownTP, ownExp := buffered()
	var hookCalls atomic.Int32
	var poolAtHook, ownAtHook atomic.Int32
	hook := func(ctx context.Context) error {
		hookCalls.Add(1)
		poolAtHook.Store(int32(len(spansNamed(snapshots(poolExp), runtime.RunSpanName))))
		ownAtHook.Store(int32(len(spansNamed(snapshots(ownExp), runtime.RunSpanName))))
		if _, ok := ctx.Deadline(); !ok {
			return errors.New("hook context without a deadline")
		}
		return errors.Join(poolTP.Shutdown(ctx), ownTP.Shutdown(ctx))
	}
	pool := quietPool(runtime.WithTracerProvider(poolTP), runtime.WithShutdownHook(hook)).
		Register(&runtime.ScheduledPipeline{PipelineID: "shared", Schedule: runtime.Once(), Factory: nopFactory}).
		Register(&runtime.ScheduledPipeline{PipelineID: "own", Schedule: runtime.Once(), Factory: nopFactory, TracerProvider: ownTP})
	// Nothing is exported before the end: the batches wait an hour.
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := hookCalls.Load(); n != 1 {
		t.Fatalf("hook called %d times, want once", n)
	}
	// Both providers were flushed before the hook, which shut them down
	// (and the in-memory exporters forget their spans on shutdown).
	if poolAtHook.Load() != 1 || ownAtHook.Load() != 1 {
		t.Errorf("run spans exported when the hook ran: pool's %d, pipeline's %d; want one each", poolAtHook.Load(), ownAtHook.Load())
	}
	if err := pool.Run(context.Background()); !errors.Is(err, runtime.ErrAlreadyRunning) || hookCalls.Load() != 1 {
		t.Errorf("second Run: %v, hook calls %d", err, hookCalls.Load())
	}
}

func TestShutdownHooksRunOnceAfterAFailedValidation(t *testing.T) {
	var calls atomic.Int32
	pool := quietPool(runtime.WithShutdownHook(func(context.Context) error { calls.Add(1); return errors.New("ignored, logged") }))
	for range 2 {
		if err := pool.Run(context.Background()); !errors.Is(err, runtime.ErrInvalidPipeline) {
			t.Fatalf("Run of an empty pool = %v", err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("hook called %d times, want once", n)
	}
}

func TestUntracedRunHasNoSpan(t *testing.T) {
	var recordingSpan, validSpan atomic.Bool
	pool := quietPool().
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: onceFactory(func(ctx context.Context) error {
			s := trace.SpanFromContext(ctx)
			recordingSpan.Store(s.IsRecording())
			validSpan.Store(s.SpanContext().IsValid())
			return nil
		})})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if recordingSpan.Load() || validSpan.Load() {
		t.Fatal("a pool without a tracer provider put a span in the run's context")
	}
}

func TestStartAloneTracesWithThePipelinesProviderAndFlushes(t *testing.T) {
	tp, exp := buffered()
	sp := &runtime.ScheduledPipeline{PipelineID: "alone", Schedule: runtime.Once(), Factory: nopFactory, TracerProvider: tp}
	if err := sp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != runtime.RunSpanName {
		t.Fatalf("exported %+v, want the run span (flushed by Start)", spans)
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range spans[0].Attributes {
		attrs[kv.Key] = kv.Value
	}
	if attrs[runtime.AttrPipelineID].AsString() != "alone" || attrs[runtime.AttrWorkerID].AsString() == "" {
		t.Errorf("attributes %v", attrs)
	}
}

func TestRunNowTracesFlushesAndRunsTheHooks(t *testing.T) {
	tp, exp := buffered()
	var atHook []sdktrace.ReadOnlySpan // written by the hook, before RunNow returns
	pool := quietPool(runtime.WithTracerProvider(tp), runtime.WithWorkerID("cli"),
		runtime.WithShutdownHook(func(ctx context.Context) error {
			atHook = snapshots(exp)
			return tp.Shutdown(ctx)
		})).
		Register(&runtime.ScheduledPipeline{PipelineID: "a", Schedule: runtime.Every(time.Hour), Factory: nopFactory}).
		Register(&runtime.ScheduledPipeline{PipelineID: "b", Schedule: runtime.Every(time.Hour), Factory: onceFactory(func(context.Context) error {
			return errors.New("refused")
		})})
	if err := pool.RunNow(context.Background()); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("RunNow = %v", err)
	}
	if len(atHook) != 2 {
		t.Fatalf("%d spans exported when the hook ran, want both runs'", len(atHook))
	}
	for _, s := range atHook {
		a := spanAttrs(s)
		want := map[string]string{"a": runtime.RunStatusSuccess, "b": runtime.RunStatusError}[a[runtime.AttrPipelineID].AsString()]
		if got := a[runtime.AttrRunStatus].AsString(); got != want || a[runtime.AttrWorkerID].AsString() != "cli" {
			t.Errorf("span of %s: status %q (want %q), worker %q", a[runtime.AttrPipelineID].AsString(), got, want, a[runtime.AttrWorkerID].AsString())
		}
	}
}

func TestTypedNilProvidersMeanUntraced(t *testing.T) {
	// What tracing.NewTracerProvider returns when spans go nowhere, passed
	// on as it comes.
	var none *sdktrace.TracerProvider
	var traced atomic.Bool
	pool := quietPool(runtime.WithTracerProvider(none)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), TracerProvider: none, Factory: onceFactory(func(ctx context.Context) error {
			traced.Store(trace.SpanFromContext(ctx).IsRecording())
			return nil
		})})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if traced.Load() {
		t.Fatal("a nil provider traced the run")
	}
}

// loseAfterGrant is a fakeCoord whose leases are lost right after the grant
// is confirmed: the second CurrentLease of each attempt finds none.
type loseAfterGrant struct {
	*fakeCoord
	calls atomic.Int32
}

func (c *loseAfterGrant) CurrentLease(id string) (runtime.Lease, bool) {
	if c.calls.Add(1)%2 == 0 {
		return runtime.Lease{}, false
	}
	return c.fakeCoord.CurrentLease(id)
}

func TestRunSpanOfALeaseLostBeforeTheRunStarted(t *testing.T) {
	tp, rec := recording()
	var built atomic.Bool
	pool := quietPool(runtime.WithTracerProvider(tp), runtime.WithCoordinator(&loseAfterGrant{fakeCoord: newFakeCoord()})).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: func(ctx context.Context) (runtime.Pipeline, error) {
			built.Store(true)
			return nopFactory(ctx)
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.Ended()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	if built.Load() {
		t.Fatal("the pipeline ran without its lease")
	}
	run := onlySpan(t, rec.Ended(), runtime.RunSpanName)
	if got := spanAttrs(run)[runtime.AttrRunStatus].AsString(); got != runtime.RunStatusCancelled {
		t.Errorf("status attribute %q, want cancelled", got)
	}
	if run.Status().Code != codes.Error || len(run.Events()) != 1 {
		t.Errorf("status %+v, events %+v; want Error and the lost lease recorded", run.Status(), run.Events())
	}
}

// TestPipelineNoopProviderOptsOutOfThePools: a pipeline whose own provider
// is the no-op one is not traced by the pool's.
func TestPipelineNoopProviderOptsOutOfThePools(t *testing.T) {
	inner, innerRec := recording()
	pool := quietPool(runtime.WithTracerProvider(inner)).
		Register(&runtime.ScheduledPipeline{PipelineID: "out", Schedule: runtime.Once(), Factory: nopFactory, TracerProvider: noop.NewTracerProvider()})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(innerRec.Ended()); n != 0 {
		t.Errorf("the pool's provider traced a pipeline that opted out with the no-op one (%d spans)", n)
	}
}
