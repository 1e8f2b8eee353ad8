package runtime

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agora-etl/agora/internal/isnil"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// RunSpanName is the name of the span that covers one run, from the lease
// being granted to it being completed or released.
const RunSpanName = engine.RunSpanName

// Attribute keys of the run span.
const (
	// AttrPipelineID is the pipeline's id.
	AttrPipelineID = engine.AttrPipelineID
	// AttrRunNumber is the lease's run number.
	AttrRunNumber = engine.AttrRunNumber
	// AttrFencingToken is the lease's fencing token (0: unfenced).
	AttrFencingToken = engine.AttrFencingToken
	// AttrWorkerID is the id of the worker that ran the run.
	AttrWorkerID = engine.AttrWorkerID
	// AttrRecordsIn counts the records the run read (CountRecords).
	AttrRecordsIn = engine.AttrRecordsIn
	// AttrRecordsOut counts the records every sink accepted.
	AttrRecordsOut = engine.AttrRecordsOut
	// AttrRecordsDeadLettered counts the records sent to the dead-letter
	// queue.
	AttrRecordsDeadLettered = engine.AttrRecordsDeadLettered
	// AttrRecordsFiltered counts the records a filter transform left out.
	AttrRecordsFiltered = engine.AttrRecordsFiltered
	// AttrRunStatus is one of the RunStatus values.
	AttrRunStatus = engine.AttrRunStatus
)

// Values of AttrRunStatus.
const (
	// RunStatusSuccess marks a run that returned nil.
	RunStatusSuccess = engine.RunStatusSuccess
	// RunStatusError marks a run whose factory, Run or Close failed.
	RunStatusError = engine.RunStatusError
	// RunStatusPanic marks a run whose factory, Run or Close panicked.
	RunStatusPanic = engine.RunStatusPanic
	// RunStatusCancelled marks a run the pool cancelled (lost lease,
	// graceful timeout, forced shutdown) or whose lease was lost before it
	// started.
	RunStatusCancelled = engine.RunStatusCancelled
)

// ShutdownHookTimeout bounds, at the end of WorkerPool.Run and RunNow,
// flushing the spans and running the shutdown hooks, all together.
const ShutdownHookTimeout = 5 * time.Second

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
