package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// ErrUnknownPipeline is wrapped by the error of RunNow when a pipeline id
// names no registered pipeline, and by the fleet inspector's errors
// (distributed.ErrUnknownPipeline is this value) for a pipeline id no live
// worker runs.
var ErrUnknownPipeline = errors.New("runtime: unknown pipeline")

// ErrLeaseHeld is wrapped by the error of RunNow for a pipeline whose lease
// another worker holds, so the run did not start.
var ErrLeaseHeld = engine.ErrLeaseHeld

// ErrRunFailed is matched (errors.Is) by the part of RunNow's error about
// a pipeline whose run started and failed. The pool has logged that run's
// error already, at ERROR ("run failed"), so a caller that logs RunNow's
// error can leave those parts out and say each failure once. The error's
// text is the pipeline's and the run's, without this sentinel's.
var ErrRunFailed = engine.ErrRunFailed

// RunNow runs every registered pipeline, or only those named by
// pipelineIDs, once, now, in the foreground, and returns when every run has
// ended. The runs go concurrently; the pool's logger and clock are used.
//
// With a coordinator configured (WithCoordinator), RunNow starts it under
// the pool's worker id, takes a lease for each run, gives it back
// (completed after a success) and stops the coordinator again. Each run asks
// for RunNumberAuto: the coordinator numbers the run itself (with Redis,
// the run number is its fencing token) and applies no slot rule, so a run
// now never marks a scheduled slot as done and never disturbs the schedule
// of replicas that are running; it does wait for nobody, so while another
// worker holds the pipeline's lease the run does not start and RunNow
// reports ErrLeaseHeld for it. A lost lease cancels the run's context, as in
// Run.
//
// RunNow returns nil only when every run succeeded; otherwise an error
// naming each pipeline that failed, was not run, or is unknown (wrapping
// ErrUnknownPipeline, ErrLeaseHeld, or the run's error). Cancelling ctx
// cancels the runs. Invalid pipelines are reported as by Run. RunNow is for
// a pool that is not running: on a running pool it returns an error wrapping
// ErrAlreadyRunning. Runs are traced as in Run; as RunNow returns it
// flushes the spans and runs the shutdown hooks, as Run does
// (WithShutdownHook).
func (p *WorkerPool) RunNow(ctx context.Context, pipelineIDs ...string) error {
	p.mu.Lock()
	if p.ran.Load() {
		p.mu.Unlock()
		return fmt.Errorf("%w: RunNow on a running WorkerPool", ErrAlreadyRunning)
	}
	defer p.flushAndRunHooks(ctx)
	if err := p.validate(); err != nil {
		p.mu.Unlock()
		return err
	}
	selected, indexes, err := p.selectPipelines(pipelineIDs)
	registered := len(p.pipelines)
	p.mu.Unlock()
	if err != nil {
		return err
	}

	cfg := p.cfg
	if cfg.clock == nil {
		cfg.clock = SystemClock{}
	}
	logger := p.logger()
	coord := cfg.coordinator
	if coord == nil {
		coord = NewLocalCoordinator(cfg.clock, WithLocalRunHistory(cfg.runHistory))
	}
	if cfg.metrics != nil {
		cfg.metrics.ObservePipelines(registered)
	}
	caps := coord.Capabilities()
	ids := make([]string, 0, len(selected))
	for _, sp := range selected {
		ids = append(ids, sp.PipelineID)
	}
	eng := engine.New(engineConfig(cfg, coord, caps, logger, ctx), specsOf(selected), indexes, false)
	for i, sp := range selected {
		if !sp.active.CompareAndSwap(nil, eng.Runner(i)) {
			for j := range i {
				selected[j].active.CompareAndSwap(eng.Runner(j), nil)
			}
			return fmt.Errorf("%w: pipeline %q is started elsewhere", ErrAlreadyRunning, sp.PipelineID)
		}
	}
	defer func() {
		for i, sp := range selected {
			sp.active.CompareAndSwap(eng.Runner(i), nil)
		}
	}()

	coord.SetLeaseLostCallback(func(id string, lease Lease) { eng.CancelLost(id, engine.Lease(lease)) })
	// Runs asked for now count no failure fleet-wide, and a worker that
	// only runs them now is no replica starting a new count: the
	// coordinator gets no failure rules.
	caps.FailureSharer = nil
	reportSchedules(caps, selected)
	if err := coord.Start(ctx, cfg.workerID, ids); err != nil {
		return fmt.Errorf("runtime: starting coordinator: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), coordinatorStopTimeout)
		defer cancel()
		if err := coord.Stop(sctx); err != nil {
			logger.Warn("stopping the coordinator failed", slog.Any("error", err))
		}
	}()
	return eng.RunNow()
}

// selectPipelines returns the pipelines named by ids, in registration
// order with their indexes among the registered ones, or every pipeline
// when ids is empty. Called with p.mu held.
func (p *WorkerPool) selectPipelines(ids []string) ([]*ScheduledPipeline, []int, error) {
	if len(ids) == 0 {
		all := make([]int, len(p.pipelines))
		for i := range all {
			all[i] = i
		}
		return slices.Clone(p.pipelines), all, nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var (
		out     []*ScheduledPipeline
		indexes []int
	)
	known := make([]string, 0, len(p.pipelines))
	for i, sp := range p.pipelines {
		known = append(known, sp.PipelineID)
		if want[sp.PipelineID] {
			out = append(out, sp)
			indexes = append(indexes, i)
			delete(want, sp.PipelineID)
		}
	}
	var errs []error
	for _, id := range ids {
		if want[id] {
			delete(want, id) // named twice: reported once
			errs = append(errs, fmt.Errorf("%w %q (registered: %s)", ErrUnknownPipeline, id, strings.Join(known, ", ")))
		}
	}
	return out, indexes, errors.Join(errs...)
}
