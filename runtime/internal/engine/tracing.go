package engine

import (
	"context"
	"errors"
	"sync"

	"github.com/agora-etl/agora/internal/isnil"
	"github.com/agora-etl/agora/runtime/history"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracerName is the instrumentation scope of the run spans.
const tracerName = "github.com/agora-etl/agora/runtime"

// runTracing is what the runners of one env share for tracing.
type runTracing struct {
	provider trace.TracerProvider // the pool's; nil: none
	workerID string
	once     sync.Once
	resolved trace.Tracer // provider's tracer, from the first run
}

// startRunSpan starts the span of the run lease grants, or returns nil when
// neither the pipeline nor the pool has a tracer provider: the only cost of
// tracing when it is off.
func (r *Runner) startRunSpan(lease Lease) trace.Span {
	tracer := r.resolveTracer()
	if tracer == untraced {
		return nil
	}
	// The pool's context is the parent: a span there (a one-shot run under
	// the caller's trace) becomes the run's parent, as OpenTelemetry does.
	_, span := tracer.Start(r.env.parent, RunSpanName, trace.WithAttributes(
		AttrPipelineID.String(lease.PipelineID),
		AttrRunNumber.Int64(lease.RunNumber),
		AttrFencingToken.Int64(lease.FencingToken),
		AttrWorkerID.String(r.env.tracing.workerID),
	))
	return span
}

// untraced is the tracer of a runner with no tracer provider: resolved once,
// then compared, so an untraced run asks nothing more.
var untraced trace.Tracer = noTracer{}

type noTracer struct{ trace.Tracer }

// resolveTracer returns the tracer of r's runs: from the pipeline's provider,
// else the pool's, else untraced. A typed nil provider (a nil
// *sdktrace.TracerProvider, as tracing.NewTracerProvider returns when spans
// go nowhere) counts as none. The no-op provider (noop.NewTracerProvider)
// means untraced, and costs what no provider costs: its spans would record
// nothing, and a context without a span answers SpanFromContext with the
// same no-op span.
//
// A pipeline without a provider of its own uses the pool's tracer, looked up
// once per pool; one with its own asks that provider at each run rather than
// keep a tracer in every runner (OpenTelemetry's providers cache their
// tracers, so asking again costs a map lookup).
func (r *Runner) resolveTracer() trace.Tracer {
	if tp := r.sp.TracerProvider; !isnil.Value(tp) {
		return tracerOf(tp)
	}
	return r.env.tracing.tracer()
}

// tracer returns the pool's tracer (untraced without a provider), looked up
// on first use.
func (t *runTracing) tracer() trace.Tracer {
	t.once.Do(func() { t.resolved = tracerOf(t.provider) })
	return t.resolved
}

// tracerOf returns tp's tracer for runs, untraced for none or a no-op one.
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if isnil.Value(tp) {
		return untraced
	}
	if _, ok := tp.(noop.TracerProvider); ok {
		return untraced
	}
	return tp.Tracer(tracerName)
}

// runBase returns the parent of a run's context: the pool's, with span as
// its current span when the run is traced.
func (env *runEnv) runBase(span trace.Span) context.Context {
	if span == nil {
		return env.parent
	}
	return trace.ContextWithSpan(env.parent, span)
}

// endRunSpan ends span (nil: untraced) with the run's outcome. cause is
// what the pool cancelled the run with, if it did.
func (e Errors) endRunSpan(span trace.Span, runErr, cause error, records history.RecordCounts) {
	if span == nil {
		return
	}
	status := e.runStatus(runErr, cause)
	span.SetAttributes(
		AttrRecordsIn.Int64(records.In),
		AttrRecordsOut.Int64(records.Out),
		AttrRecordsDeadLettered.Int64(records.DeadLettered),
		AttrRecordsFiltered.Int64(records.Filtered),
		AttrRunStatus.String(status),
	)
	if runErr != nil {
		if stack, ok := e.panicStack(runErr); ok {
			span.RecordError(runErr, trace.WithAttributes(attribute.String("exception.stacktrace", string(stack))))
		} else {
			span.RecordError(runErr)
		}
		span.SetStatus(codes.Error, runErr.Error())
	}
	span.End()
}

// runStatus classifies a run's outcome for AttrRunStatus.
func (e Errors) runStatus(runErr, cause error) string {
	switch {
	case runErr == nil:
		return RunStatusSuccess
	case e.isPanic(runErr):
		return RunStatusPanic
	case cause != nil, errors.Is(runErr, context.Canceled), isPoolCause(runErr):
		return RunStatusCancelled
	default:
		return RunStatusError
	}
}

// endUnstartedRunSpan ends the span of a run whose lease was lost before it
// started: nothing ran, and the span says why.
func endUnstartedRunSpan(span trace.Span) {
	if span == nil {
		return
	}
	span.SetAttributes(AttrRunStatus.String(RunStatusCancelled))
	span.RecordError(ErrLeaseLost)
	span.SetStatus(codes.Error, "lease lost before the run started")
	span.End()
}

// The names of the run span and its attributes and statuses, runtime's
// (runtime.RunSpanName and the rest), which document them.
const (
	RunSpanName             = "agora.run"
	AttrPipelineID          = attribute.Key("agora.pipeline.id")
	AttrRunNumber           = attribute.Key("agora.run.number")
	AttrFencingToken        = attribute.Key("agora.fencing_token")
	AttrWorkerID            = attribute.Key("agora.worker.id")
	AttrRecordsIn           = attribute.Key("agora.records.in")
	AttrRecordsOut          = attribute.Key("agora.records.out")
	AttrRecordsDeadLettered = attribute.Key("agora.records.dead_lettered")
	AttrRecordsFiltered     = attribute.Key("agora.records.filtered")
	AttrRunStatus           = attribute.Key("agora.run.status")
	RunStatusSuccess        = "success"
	RunStatusError          = "error"
	RunStatusPanic          = "panic"
	RunStatusCancelled      = "cancelled"
)
