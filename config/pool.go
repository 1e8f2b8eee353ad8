package config

import (
	"context"
	"fmt"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/metrics"
)

// Pool builds the worker pool the file describes: the [worker] settings,
// lease coordination through Redis when AGORA_DISTRIBUTED_REDIS_URL is set
// (as in a generated worker), a tracer provider for each pipeline whose
// tracing is enabled (shut down by the pool when it stops), and one
// ScheduledPipeline per pipeline; its /metrics serves etl's sink counters
// and the fenced-write refusals (etl.SinkCollector,
// fencing.RefusalCollector). opts come after the file's settings, so they
// win.
//
// `agora worker --config F` is
//
//	worker.RunMain(ctx, args, stderr, func() (*runtime.WorkerPool, error) {
//		f, err := config.Load(path)
//		if err != nil {
//			return nil, err
//		}
//		return f.Pool()
//	})
func (f *File) Pool(opts ...runtime.PoolOption) (*runtime.WorkerPool, error) {
	var po []runtime.PoolOption
	if f.Worker.HasHealthPort {
		po = append(po, runtime.WithHealthPort(f.Worker.HealthPort))
	}
	if f.Worker.GracefulShutdownTimeout > 0 {
		po = append(po, runtime.WithGracefulShutdownTimeout(f.Worker.GracefulShutdownTimeout))
	}
	if f.Worker.WorkerID != "" {
		po = append(po, runtime.WithWorkerID(f.Worker.WorkerID))
	}
	notifyOpts, err := f.notifyOptions()
	if err != nil {
		return nil, err
	}
	po = append(po, notifyOpts...)
	// The runs are kept in memory, as a generated worker's are
	// (worker.RunMain), within run_history when it is set; "off" gives a
	// history that keeps nothing, so no default takes its place.
	var runs history.Policy
	if f.Worker.RunHistory != nil {
		runs = *f.Worker.RunHistory
	}
	po = append(po, runtime.WithRunHistory(history.New(runs)))
	coord, err := f.coordinatorFromEnv()
	if err != nil {
		return nil, err
	}
	if coord != nil {
		po = append(po, coord)
		state, closeState, err := readStateFromEnv()
		if err != nil {
			return nil, err
		}
		if state != nil {
			for _, p := range f.Pipelines {
				p.readState = state
			}
			po = append(po, runtime.WithShutdownHook(closeState))
		}
	}
	sps := f.ScheduledPipelines()
	traceOpts, err := f.wireTracing(context.Background(), sps)
	if err != nil {
		return nil, err
	}
	po = append(po, traceOpts...)
	// The sinks' and the fenced writes' counters are the process's; the
	// pool serves them at /metrics because it runs etl pipelines.
	po = append(po, runtime.WithMetrics(metrics.New(metrics.WithCollectors(etl.SinkCollector(), fencing.RefusalCollector()))))
	po = append(po, opts...)
	pool := runtime.NewWorkerPool(po...)
	for _, sp := range sps {
		pool.Register(sp)
	}
	return pool, nil
}

// ScheduledPipelines returns a new runtime.ScheduledPipeline for each
// pipeline, in file order, for a program that builds its own pool.
func (f *File) ScheduledPipelines() []*runtime.ScheduledPipeline {
	out := make([]*runtime.ScheduledPipeline, len(f.Pipelines))
	for i, p := range f.Pipelines {
		out[i] = &runtime.ScheduledPipeline{
			PipelineID:           p.ID,
			Factory:              p.Factory(),
			Schedule:             p.Schedule.Runtime(),
			ErrorBackoff:         p.ErrorBackoff,
			MaxConsecutiveErrors: p.MaxConsecutiveErrors,
			Timeout:              p.Timeout,
			Deadline:             p.Deadline,
			CatchUp:              p.Schedule.catchUpPolicy(),
		}
		out[i].RerunInterrupted = p.Schedule.RerunInterrupted
		out[i].After, out[i].AfterTimeout = p.After, p.AfterTimeout
		if g := p.Schedule.Grace; g != nil {
			out[i].Grace = *g
		}
	}
	return out
}

// Factory returns the pipeline's factory: every run builds its source,
// sinks and DLQ through the registry, with the run's context, and moves
// the run's records between them.
func (p *Pipeline) Factory() runtime.Factory {
	return func(ctx context.Context) (runtime.Pipeline, error) {
		params, err := p.runParams(ctx)
		if err != nil {
			return nil, fmt.Errorf("pipeline %q: %w", p.ID, err)
		}
		if params != nil {
			ctx = runtime.ContextWithParams(ctx, params)
		}
		srcCtx := ctx
		if p.readState != nil {
			srcCtx = etl.ContextWithReadState(ctx, p.readState)
		}
		src, err := p.Source.Spec.BuildSource(srcCtx, p.Source.Config)
		if err != nil {
			return nil, p.redactErr(fmt.Errorf("pipeline %q: source: %w", p.ID, err))
		}
		built := []any{src}
		fail := func(what string, err error) (runtime.Pipeline, error) {
			_ = closeAll(built)
			return nil, p.redactErr(fmt.Errorf("pipeline %q: %s: %w", p.ID, what, err))
		}
		sinks := make([]etl.Sink, len(p.Sinks))
		for i, c := range p.Sinks {
			if sinks[i], err = c.Spec.BuildSink(ctx, c.Config); err != nil {
				return fail(fmt.Sprintf("sink %d (%s)", i, c.Type), err)
			}
			built = append(built, sinks[i])
			if c.Name != "" {
				sinks[i] = etl.Named(c.Name, sinks[i])
			}
		}
		var dlq etl.Sink
		if p.DLQ != nil {
			if dlq, err = p.DLQ.Spec.BuildSink(ctx, p.DLQ.Config); err != nil {
				return fail("dlq", err)
			}
		}
		return redactingPipeline{newRecordPipeline(p, src, sinks, dlq), p, params}, nil
	}
}

// redactingPipeline hides the file's secrets in the errors of a run, which
// the worker logs and /status shows, and gives the run's components its
// parameters with the pipeline's defaults filled in (runParams).
type redactingPipeline struct {
	runtime.Pipeline
	p      *Pipeline
	params map[string]string // nil: the run's context is passed on as it is
}

// ReplacesSlots reports whether the record pipeline replaces a slot's
// rows when the slot runs again (etl.SlotReplacer).
func (r redactingPipeline) ReplacesSlots() bool {
	sr, ok := r.Pipeline.(etl.SlotReplacer)
	return ok && sr.ReplacesSlots()
}

func (r redactingPipeline) Run(ctx context.Context) error {
	if r.params != nil {
		ctx = runtime.ContextWithParams(ctx, r.params)
	}
	if err := r.Pipeline.Run(ctx); err != nil {
		return r.p.redactErr(err)
	}
	return nil
}

// redactedError hides passwords in an error's text and keeps its chain.
type redactedError struct {
	err   error
	known *redact.Known
}

func (e redactedError) Error() string { return e.known.Text(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }

func (p *Pipeline) redactErr(err error) error { return redactedError{err, p.known} }
