package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/agora-etl/agora/runtime/notify"
	"go.opentelemetry.io/otel/trace"
)

// Pool is one Run, or one RunNow, of a pool's pipelines: the runners, the
// environment they share, the dispatcher that drives them (none for
// RunNow) and the watch of their deadlines. runtime's WorkerPool keeps one
// per Run and forwards to it.
type Pool struct {
	env     *runEnv
	d       *dispatcher
	runners []*Runner
	// byID is built on the first lost lease: the local coordinator never
	// loses one, and then the map is not worth its memory.
	byIDOnce sync.Once
	byID     map[string]*Runner

	// deadlines watches the pipelines' deadlines; nil when none has one.
	deadlines *deadlineWatch
	// backfills runs the slots of backfills; nil when the coordinator
	// runs none (backfill.go).
	backfills *backfills

	terminal chan struct{} // closed at the first terminal pipeline error
	errMu    sync.Mutex
	errs     []error
}

// Config is what the runners of one Pool share, in the engine's types.
type Config struct {
	Clock Clock
	// Precise says Clock is the system clock, whose timers the dispatcher
	// spins through before a large burst (see prepareBurstLocked).
	Precise      bool
	Coordinator  Coordinator
	Capabilities Capabilities
	Logger       *slog.Logger
	Observer     RunObserver // nil: runs are timed by nobody
	Notifier     notify.Notifier
	WorkerID     string
	// TracerProvider traces the runs of pipelines without their own; nil: none.
	TracerProvider trace.TracerProvider
	// Parent is the parent of every run context: the pool passes one never
	// cancelled and cancels runs one by one.
	Parent context.Context
	Errors Errors
	// TriggerRetry is how often a claimed trigger asks for the lease again
	// while it is held elsewhere, for at most TriggerPatience (runtime's
	// timing rules for triggers).
	TriggerRetry, TriggerPatience time.Duration
}

// New returns the Pool of specs, whose indexes among the pool's
// registered pipelines are indexes (a RunObserver and EachReading name
// them so). The runners point into specs, one array for the whole pool.
// scheduled asks for a dispatcher (Run); without one (RunNow) the runners
// only run once, with RunNow.
func New(cfg Config, specs []Spec, indexes []int, scheduled bool) *Pool {
	p := &Pool{env: newRunEnv(cfg), runners: make([]*Runner, 0, len(specs)), terminal: make(chan struct{})}
	if scheduled {
		p.d = newDispatcher(cfg.Clock, p.onFinish, len(specs))
		p.d.precise = cfg.Precise
		p.env.d = p.d
		// Leases in memory are taken by each runner at once; a batch would
		// ask for them a second time (Capabilities.LocalLeaser).
		if b := p.env.caps.BatchLeaser; b != nil && p.env.local == nil {
			p.d.leaser, p.d.deferrer = b, p.env.caps.LeaseDeferrer
			if a := p.env.caps.LeaseAheader; a != nil {
				p.d.ahead = min(a.LeaseAhead(), MaxLeaseAhead)
			}
		}
	}
	for i := range specs {
		r := newRunner(&specs[i], p.env)
		r.index = int32(indexes[i])
		p.runners = append(p.runners, r)
	}
	return p
}

// Runner returns the runner of the i-th spec given to New.
func (p *Pool) Runner(i int) *Runner { return p.runners[i] }

// Start plans every runner's first attempt from now, puts it in the
// dispatcher's heap and starts the deadline watch; Loop then starts the
// dispatcher.
func (p *Pool) Start() {
	now := p.env.now()
	for _, r := range p.runners {
		r.begin(now)
		p.d.add(r)
	}
	p.deadlines = newDeadlineWatch(p.env, p.runners, now)
	if p.deadlines != nil {
		p.deadlines.start()
	}
	p.backfills = newBackfills(p.env, p.runners)
	if p.backfills != nil {
		p.backfills.start()
	}
}

// Loop starts the dispatcher's loop.
func (p *Pool) Loop() { go p.d.loop() }

// Terminal returns a channel closed at the first pipeline that stops with
// an error (MaxConsecutiveErrors).
func (p *Pool) Terminal() <-chan struct{} { return p.terminal }

// AllDone returns a channel closed once every pipeline has finished.
func (p *Pool) AllDone() <-chan struct{} { return p.d.allDone }

// Errors returns the errors the pipelines stopped with so far.
func (p *Pool) Errors() []error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return slices.Clone(p.errs)
}

// StopDeadlines stops the deadline watch, before the coordinator it asks
// stops.
func (p *Pool) StopDeadlines() {
	if p.deadlines != nil {
		p.deadlines.stop()
	}
}

// Now reads the pool's clock as the runners do, without its monotonic part.
func (p *Pool) Now() time.Time { return p.env.now() }

// Status returns the i-th pipeline's entry in /status, its times its own.
func (p *Pool) Status(i int) Status { return p.runners[i].status() }

// EachReading reads every pipeline, in order, into rd and calls fn with
// it; rd is reused from one pipeline to the next, so reading ten thousand
// allocates nothing per pipeline.
func (p *Pool) EachReading(rd *Reading, fn func(*Reading)) {
	now := p.env.now()
	for _, r := range p.runners {
		next := r.read(rd)
		rd.Interval = scheduleInterval(r.sp.Schedule, next, now)
		fn(rd)
	}
}

// Shutdown runs steps 2 to 5 of the shutdown sequence runtime's
// WorkerPool.Run documents: stop every pipeline, wait graceful for the
// runs in flight, then cancel them. reason is logged.
func (pr *Pool) Shutdown(reason string, graceful time.Duration, signals <-chan os.Signal) error {
	logger := pr.env.logger
	inFlight := pr.d.running.Load()
	logger.Info("shutting down gracefully", slog.String("reason", reason),
		slog.Int64("runs_in_flight", inFlight), slog.Duration("graceful_timeout", graceful))
	for _, r := range pr.runners {
		r.stop()
	}
	pr.d.stop()
	if pr.backfills != nil {
		pr.backfills.stop()
	}

	finished := make(chan struct{})
	go func() {
		<-pr.d.idle()
		// Runs handed back after the loop ended finish here.
		pr.d.takeCompleted()
		if pr.backfills != nil {
			<-pr.backfills.idle()
		}
		close(finished)
	}()
	timer := pr.env.clock.NewTimer(graceful)
	defer timer.Stop()

	var cause error
	select {
	case <-finished:
		return nil
	case <-timer.C():
		cause = ErrGracefulTimeout
	case sig := <-signals:
		logger.Warn("second signal: cancelling every run now", slog.String("signal", sig.String()))
		cause = ErrForcedShutdown
	}
	names := pr.runningIDs()
	logger.Warn("cancelling runs still in flight", slog.Any("cause", cause), slog.Any("pipelines", names))
	pr.env.cancelAll(cause)
	for _, r := range pr.runners {
		r.cancelRun(cause, 0)
	}
	if pr.backfills != nil {
		pr.backfills.cancelAll(cause)
	}
	// Real time, not the pool's clock: runs are cancelled by now, and a fake
	// clock that no test moves any more must not hold the shutdown forever.
	abandon := time.NewTimer(abandonTimeout)
	defer abandon.Stop()
	select {
	case <-finished:
	case <-abandon.C:
		logger.Error("runs did not return after cancellation; abandoning them", slog.Any("pipelines", pr.runningIDs()))
	case <-signals:
		logger.Error("another signal: abandoning runs that ignore cancellation", slog.Any("pipelines", pr.runningIDs()))
		if cause != ErrForcedShutdown {
			// The user forced the exit after the graceful timeout.
			return fmt.Errorf("%w: cancelled runs of %v; %w: a signal abandoned them", cause, names, ErrForcedShutdown)
		}
	}
	return fmt.Errorf("%w: cancelled runs of %v", cause, names)
}

func (pr *Pool) runningIDs() []string {
	var ids []string
	for _, r := range pr.runners {
		if r.running() {
			ids = append(ids, r.id())
		}
	}
	return ids
}

// onFinish records a terminal pipeline error, which shuts the pool down.
func (pr *Pool) onFinish(r *Runner, err error) {
	if err == nil {
		return
	}
	pr.errMu.Lock()
	first := len(pr.errs) == 0
	pr.errs = append(pr.errs, err)
	pr.errMu.Unlock()
	pr.env.logger.Error("pipeline stopped after too many consecutive errors", slog.String("pipeline_id", r.id()), slog.Any("error", err))
	if first {
		close(pr.terminal)
	}
}

// LeaseLost cancels the run holding the lost lease.
func (pr *Pool) LeaseLost(pipelineID string, lease Lease) {
	r := pr.byPipeline(pipelineID)
	if r == nil {
		return
	}
	if lease.Backfill {
		// A backfill slot's lease: its run is not the runner's scheduled
		// one.
		if pr.backfills != nil && pr.backfills.cancel(lease.FencingToken, ErrLeaseLost) {
			r.logRun(slog.LevelWarn, "backfill slot's lease lost: cancelling its run", lease)
		}
		return
	}
	r.mu.Lock()
	r.rareLocked().leaseLost++
	r.mu.Unlock()
	if r.cancelRun(ErrLeaseLost, lease.FencingToken) {
		r.logRun(slog.LevelWarn, "lease lost: cancelling the run", lease)
	}
}

// Shutdown bounds that are not configurable.
const (
	// abandonTimeout is how long Run still waits for runs whose contexts were
	// cancelled before it stops the coordinator without them.
	abandonTimeout = 5 * time.Second
)
