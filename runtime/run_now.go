package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

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

// runFailed is RunNow's error for a run that started and failed.
type runFailed struct{ err error }

func (e runFailed) Error() string        { return e.err.Error() }
func (e runFailed) Unwrap() error        { return e.err }
func (e runFailed) Is(target error) bool { return target == ErrRunFailed }

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
	env := newRunEnv(cfg.clock, coord, logger, ctx)
	env.notifier, env.workerID = cfg.notifier, cfg.workerID
	env.observer = cfg.metrics
	if cfg.metrics != nil {
		cfg.metrics.ObservePipelines(registered)
	}
	env.tracing.provider, env.tracing.workerID = cfg.tracerProvider, cfg.workerID
	runners := make([]*runner, 0, len(selected))
	ids := make([]string, 0, len(selected))
	for i, sp := range selected {
		r := newRunner(sp, env)
		r.index = int32(indexes[i])
		if !sp.active.CompareAndSwap(nil, r) {
			for _, r := range runners {
				r.sp.active.CompareAndSwap(r, nil)
			}
			return fmt.Errorf("%w: pipeline %q is started elsewhere", ErrAlreadyRunning, sp.PipelineID)
		}
		runners = append(runners, r)
		ids = append(ids, sp.PipelineID)
	}
	defer func() {
		for _, r := range runners {
			r.sp.active.CompareAndSwap(r, nil)
		}
	}()

	byID := make(map[string]*runner, len(runners))
	for _, r := range runners {
		byID[r.id()] = r
	}
	coord.SetLeaseLostCallback(func(id string, lease Lease) {
		if r, ok := byID[id]; ok && r.cancelRun(ErrLeaseLost, lease.FencingToken) {
			r.logRun(slog.LevelWarn, "lease lost: cancelling the run", lease)
		}
	})
	// Runs asked for now count no failure fleet-wide, and a worker that
	// only runs them now is no replica starting a new count: the
	// coordinator gets no failure rules.
	caps := env.caps
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

	errs := make([]error, len(runners))
	var wg sync.WaitGroup
	for i, r := range runners {
		wg.Go(func() { errs[i] = r.runNow() })
	}
	wg.Wait()
	return errors.Join(errs...)
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

// runNow makes one attempt numbered by the coordinator and turns its
// outcome into an error naming the pipeline.
func (r *runner) runNow() error {
	o, _, err := r.attempt(RunNumberAuto, r.now(), 0, true)
	switch o {
	case outcomeSuccess:
		return nil
	case outcomeFailure, outcomeSlotDone:
		return runFailed{fmt.Errorf("pipeline %q: %w", r.id(), err)}
	case outcomeLeaseError:
		return fmt.Errorf("pipeline %q: cannot ask the coordinator for a lease: %w", r.id(), err)
	case outcomeSlotCompleted:
		return fmt.Errorf("pipeline %q: %w", r.id(), ErrSlotCompleted)
	case outcomeBackingOff, outcomeFleetStopped:
		return fmt.Errorf("pipeline %q: not run: %w", r.id(), err)
	case outcomeStopped:
		return fmt.Errorf("pipeline %q: stopped before the run started", r.id())
	default:
		return fmt.Errorf("pipeline %q: not run: %w", r.id(), ErrLeaseHeld)
	}
}
