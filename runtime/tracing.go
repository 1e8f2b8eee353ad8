package runtime

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agora-etl/agora/internal/isnil"
	"github.com/agora-etl/agora/runtime/history"
)

// RunSpanName is the name of the span that covers one run, from the lease
// being granted to it being completed or released.
const RunSpanName = "agora.run"

// Attribute keys of the run span.
const (
	// AttrPipelineID is the pipeline's id.
	AttrPipelineID = attribute.Key("agora.pipeline.id")
	// AttrRunNumber is the lease's run number.
	AttrRunNumber = attribute.Key("agora.run.number")
	// AttrFencingToken is the lease's fencing token (0: unfenced).
	AttrFencingToken = attribute.Key("agora.fencing_token")
	// AttrWorkerID is the id of the worker that ran the run.
	AttrWorkerID = attribute.Key("agora.worker.id")
	// AttrRecordsIn counts the records the run read (CountRecords).
	AttrRecordsIn = attribute.Key("agora.records.in")
	// AttrRecordsOut counts the records every sink accepted.
	AttrRecordsOut = attribute.Key("agora.records.out")
	// AttrRecordsDeadLettered counts the records sent to the dead-letter
	// queue.
	AttrRecordsDeadLettered = attribute.Key("agora.records.dead_lettered")
	// AttrRecordsFiltered counts the records a filter transform left out.
	AttrRecordsFiltered = attribute.Key("agora.records.filtered")
	// AttrRunStatus is one of the RunStatus values.
	AttrRunStatus = attribute.Key("agora.run.status")
)

// Values of AttrRunStatus.
const (
	// RunStatusSuccess marks a run that returned nil.
	RunStatusSuccess = "success"
	// RunStatusError marks a run whose factory, Run or Close failed.
	RunStatusError = "error"
	// RunStatusPanic marks a run whose factory, Run or Close panicked.
	RunStatusPanic = "panic"
	// RunStatusCancelled marks a run the pool cancelled (lost lease,
	// graceful timeout, forced shutdown) or whose lease was lost before it
	// started.
	RunStatusCancelled = "cancelled"
)

// ShutdownHookTimeout bounds, at the end of WorkerPool.Run and RunNow,
// flushing the spans and running the shutdown hooks, all together.
const ShutdownHookTimeout = 5 * time.Second

// tracerName is the instrumentation scope of the run spans.
const tracerName = "github.com/agora-etl/agora/runtime"

// WithTracerProvider traces every run of the pool's pipelines with tp: one
// RunSpanName span per run, carried by the run's context so spans the
// pipeline starts from it (trace.SpanFromContext(ctx).TracerProvider())
// nest under it. A ScheduledPipeline's own TracerProvider overrides it.
// Without a provider (the default), with a nil one (even a typed nil) or
// with noop.NewTracerProvider(), runs are not traced and tracing costs
// nothing. The no-op provider also keeps worker.Main from tracing the pool
// from the environment. At the end of Run and
// RunNow the pool calls ForceFlush on every provider it traced with that
// has one; it does not shut them down: the caller owns them, or hands them
// over with WithShutdownHook.
func WithTracerProvider(tp trace.TracerProvider) PoolOption {
	return func(c *poolConfig) { c.tracerProvider = tp }
}

// WithShutdownHook makes Run call hook as it returns, after every run has
// finished (or been abandoned), the coordinator has stopped and the spans
// have been flushed: the way to hand the pool what it should close, such as
// a tracer provider built for it (pass its Shutdown). Hooks run in the order
// given, with a context bounded by ShutdownHookTimeout; their errors are
// logged. They run once, when the first Run or RunNow returns, whatever it
// returns: also after a failed validation, so what was handed over is closed
// either way (build a new pool rather than running this one again).
func WithShutdownHook(hook func(context.Context) error) PoolOption {
	return func(c *poolConfig) {
		if hook != nil {
			c.shutdownHooks = append(c.shutdownHooks, hook)
		}
	}
}

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
func (r *runner) startRunSpan(lease Lease) trace.Span {
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
func (r *runner) resolveTracer() trace.Tracer {
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
func endRunSpan(span trace.Span, runErr, cause error, records history.RecordCounts) {
	if span == nil {
		return
	}
	status := runStatus(runErr, cause)
	span.SetAttributes(
		AttrRecordsIn.Int64(records.In),
		AttrRecordsOut.Int64(records.Out),
		AttrRecordsDeadLettered.Int64(records.DeadLettered),
		AttrRecordsFiltered.Int64(records.Filtered),
		AttrRunStatus.String(status),
	)
	if runErr != nil {
		var pe *PanicError
		if errors.As(runErr, &pe) {
			span.RecordError(runErr, trace.WithAttributes(attribute.String("exception.stacktrace", string(pe.Stack))))
		} else {
			span.RecordError(runErr)
		}
		span.SetStatus(codes.Error, runErr.Error())
	}
	span.End()
}

// runStatus classifies a run's outcome for AttrRunStatus.
func runStatus(runErr, cause error) string {
	var pe *PanicError
	switch {
	case runErr == nil:
		return RunStatusSuccess
	case errors.As(runErr, &pe):
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

// flusher is what SDK tracer providers implement to export buffered spans.
type flusher interface {
	ForceFlush(ctx context.Context) error
}

// tracerProviders lists, once each, the providers runs of the pool may have
// been traced with.
func (p *WorkerPool) tracerProviders() []trace.TracerProvider {
	var tps []trace.TracerProvider
	add := func(tp trace.TracerProvider) {
		if isnil.Value(tp) {
			return
		}
		// Comparing interfaces panics on uncomparable dynamic types; those
		// are listed without deduplication.
		if reflect.TypeOf(tp).Comparable() {
			for _, seen := range tps {
				if reflect.TypeOf(seen).Comparable() && seen == tp {
					return
				}
			}
		}
		tps = append(tps, tp)
	}
	add(p.cfg.tracerProvider)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sp := range p.pipelines {
		if sp != nil {
			add(sp.TracerProvider)
		}
	}
	return tps
}

// flushAndRunHooks flushes every provider the pool traced with, then runs
// the shutdown hooks, bounded by ShutdownHookTimeout.
func (p *WorkerPool) flushAndRunHooks(ctx context.Context) {
	if !p.hooked.CompareAndSwap(false, true) {
		return
	}
	tps := p.tracerProviders()
	if len(tps) == 0 && len(p.cfg.shutdownHooks) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownHookTimeout)
	defer cancel()
	logger := p.logger()
	for _, tp := range tps {
		if err := forceFlush(ctx, tp); err != nil {
			logger.Warn("flushing spans failed", slog.Any("error", err))
		}
	}
	for _, hook := range p.cfg.shutdownHooks {
		if err := hook(ctx); err != nil {
			logger.Warn("shutdown hook failed", slog.Any("error", err))
		}
	}
}

// forceFlush calls tp's ForceFlush, when it has one.
func forceFlush(ctx context.Context, tp trace.TracerProvider) error {
	if f, ok := tp.(flusher); ok {
		return f.ForceFlush(ctx)
	}
	return nil
}
