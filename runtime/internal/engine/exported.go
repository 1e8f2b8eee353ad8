package engine

import (
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Stop ends r's schedule (runtime.ScheduledPipeline.Stop).
func (r *Runner) Stop() { r.stop() }

// Begin plans r's first attempt from now; with Step and Next it lets a
// benchmark drive one runner without a dispatcher.
func (r *Runner) Begin(now time.Time) { r.begin(now) }

// Step makes the attempt due at now and plans the next one; done reports
// the pipeline must not run again, with the error it stops with.
func (r *Runner) Step(now time.Time) (end time.Time, done bool, err error) { return r.step(now) }

// Next is when r's next attempt is due, zero when never.
func (r *Runner) Next() time.Time { return timeOf(r.next) }

// RunNow runs every pipeline of p once, now, concurrently, and returns
// when every run has ended, with an error naming each pipeline that did
// not succeed (runtime.WorkerPool.RunNow documents it).
func (p *Pool) RunNow() error {
	errs := make([]error, len(p.runners))
	var wg sync.WaitGroup
	for i, r := range p.runners {
		wg.Go(func() { errs[i] = r.runNow() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// CancelLost is LeaseLost for RunNow, whose runs count no lost lease.
func (p *Pool) CancelLost(pipelineID string, lease Lease) {
	if r := p.byPipeline(pipelineID); r != nil && r.cancelRun(ErrLeaseLost, lease.FencingToken) {
		r.logRun(slog.LevelWarn, "lease lost: cancelling the run", lease)
	}
}
