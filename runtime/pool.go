package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agora-etl/agora/runtime/internal/engine"
	"github.com/agora-etl/agora/runtime/notify"
)

// DefaultGracefulShutdownTimeout is how long runs in flight may take to finish
// after a shutdown begins before their contexts are cancelled.
const DefaultGracefulShutdownTimeout = 30 * time.Second

// Shutdown bounds that are not configurable.
const (
	// coordinatorStopTimeout bounds Coordinator.Stop at the end of Run.
	coordinatorStopTimeout = 10 * time.Second
	// forcedStopTimeout bounds Coordinator.Stop after a forced shutdown.
	forcedStopTimeout = 2 * time.Second
	// healthStopTimeout bounds the health server's shutdown.
	healthStopTimeout = 5 * time.Second
)

// WorkerPool runs every registered ScheduledPipeline concurrently, with
// leases from a Coordinator, a health server and graceful shutdown.
//
// One dispatcher goroutine with a timer heap schedules every pipeline; a
// goroutine exists only per run in flight, so a pool of ten thousand
// pipelines idles on a few megabytes.
type WorkerPool struct {
	mu        sync.Mutex // guards pipelines against Register racing Run
	pipelines []*ScheduledPipeline
	cfg       poolConfig

	ran     atomic.Bool
	started chan struct{}
	run     atomic.Pointer[poolRun]
	health  atomic.Pointer[HealthServer]
	hooked  atomic.Bool // the shutdown hooks have run
}

type poolConfig struct {
	healthAddr      string
	healthEnabled   bool
	healthPortErr   error
	gracefulTimeout time.Duration
	coordinator     Coordinator
	logger          *slog.Logger
	workerID        string
	clock           Clock
	noSignals       bool
	signals         <-chan os.Signal // tests inject signals here
	tracerProvider  trace.TracerProvider
	shutdownHooks   []func(context.Context) error
	startLogs       []func(*slog.Logger)
	notifier        notify.Notifier
	metrics         Metrics
	runHistory      HistoryStore
	// alone is a pool ScheduledPipeline.Start runs its pipeline in:
	// cancelling Run's context cancels the runs in flight.
	alone bool
}

// PoolOption configures a WorkerPool.
type PoolOption func(*poolConfig)

// WithStartLog adds a function that logs, through the pool's logger, when
// Run starts the long-running pool, and not for RunNow or a pool that is
// only built (-help, the pipelines and run subcommands): the place for a
// notice that concerns a long-running worker only, such as
// "this replica coordinates with no other".
func WithStartLog(log func(*slog.Logger)) PoolOption {
	return func(c *poolConfig) {
		if log != nil {
			c.startLogs = append(c.startLogs, log)
		}
	}
}

// WithHealthPort serves /healthz, /readyz and /status on port on every
// interface (0 picks a free port; see WorkerPool.HealthAddr).
func WithHealthPort(port int) PoolOption {
	return func(c *poolConfig) {
		c.healthEnabled = true
		c.healthAddr = ":" + strconv.Itoa(port)
		c.healthPortErr = nil
		if port < 0 || port > 65535 {
			c.healthPortErr = fmt.Errorf("runtime: health port %d out of range 0-65535", port)
		}
	}
}

// WithHealthAddr serves the health endpoints on addr ("host:port"), for
// example "127.0.0.1:0" to listen on loopback only.
func WithHealthAddr(addr string) PoolOption {
	return func(c *poolConfig) { c.healthEnabled, c.healthAddr, c.healthPortErr = true, addr, nil }
}

// WithGracefulShutdownTimeout sets how long runs in flight may take to finish
// after a shutdown begins (default DefaultGracefulShutdownTimeout).
func WithGracefulShutdownTimeout(d time.Duration) PoolOption {
	return func(c *poolConfig) { c.gracefulTimeout = d }
}

// WithCoordinator shares leases through c instead of the in-process default.
func WithCoordinator(c Coordinator) PoolOption {
	return func(cfg *poolConfig) { cfg.coordinator = c }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) PoolOption {
	return func(c *poolConfig) { c.logger = l }
}

// WithWorkerID names this worker (default: host, pid and a random suffix).
func WithWorkerID(id string) PoolOption {
	return func(c *poolConfig) { c.workerID = id }
}

// WithClock sets the time source (default SystemClock).
func WithClock(clock Clock) PoolOption {
	return func(c *poolConfig) { c.clock = clock }
}

// WithSignalHandling turns the handling of SIGINT and SIGTERM by Run on or
// off (default on). Turn it off when the program embeds the pool and
// handles signals itself; cancelling Run's context then starts the graceful
// shutdown.
func WithSignalHandling(enabled bool) PoolOption {
	return func(c *poolConfig) { c.noSignals = !enabled }
}

// withSignalChannel makes Run read shutdown signals from ch instead of the
// process's signals.
func withSignalChannel(ch <-chan os.Signal) PoolOption {
	return func(c *poolConfig) { c.signals = ch }
}

// NewWorkerPool returns an empty pool configured by opts. A nil option is
// ignored, so an option that may be absent (distributed.CoordinatorFromEnv
// without a Redis URL) can be passed as it comes.
func NewWorkerPool(opts ...PoolOption) *WorkerPool {
	p := &WorkerPool{started: make(chan struct{})}
	for _, opt := range opts {
		if opt != nil {
			opt(&p.cfg)
		}
	}
	if p.cfg.workerID == "" {
		p.cfg.workerID = newWorkerID()
	}
	bindMetrics(p.cfg.metrics, p)
	return p
}

// Register adds sp to the pool and returns the pool, for chaining. Problems
// with sp are reported by Run, together with every other problem. Register
// before Run: a pipeline registered once Run has started is ignored, with a
// warning. Do not change a ScheduledPipeline's fields once registered.
func (p *WorkerPool) Register(sp *ScheduledPipeline) *WorkerPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ran.Load() {
		id := ""
		if sp != nil {
			id = sp.PipelineID
		}
		p.logger().Warn("pipeline registered after Run started; ignored", slog.String("pipeline_id", id))
		return p
	}
	p.pipelines = append(p.pipelines, sp)
	return p
}

func (p *WorkerPool) logger() *slog.Logger {
	if p.cfg.logger != nil {
		return p.cfg.logger
	}
	return slog.Default()
}

// WorkerID returns the id this worker uses with the coordinator and in
// /status.
func (p *WorkerPool) WorkerID() string { return p.cfg.workerID }

// Started returns a channel closed once Run has started every pipeline.
func (p *WorkerPool) Started() <-chan struct{} { return p.started }

// HealthAddr returns the address the health server listens on, or "" when
// it is not listening (yet).
func (p *WorkerPool) HealthAddr() string {
	if h := p.health.Load(); h != nil {
		return h.Addr()
	}
	return ""
}

// poolRun is the state of one Run: the engine's pool that runs it, the
// coordinator's capabilities, read once, and the pool's state.
type poolRun struct {
	eng    *engine.Pool
	caps   Capabilities
	logger *slog.Logger
	state  atomic.Int32
}

// Pool states as shown in /status.
const (
	poolStarting int32 = iota
	poolRunning
	poolShuttingDown
	poolStopped
)

func poolStateName(s int32) string {
	switch s {
	case poolRunning:
		return "running"
	case poolShuttingDown:
		return "shutting_down"
	case poolStopped:
		return "stopped"
	default:
		return "starting"
	}
}

// Run runs every registered pipeline until ctx is cancelled, a signal arrives
// or a pipeline fails terminally, then shuts down gracefully:
//
//  1. the pool enters the shutting-down state (/readyz answers 503);
//  2. Stop is called on every pipeline, so none starts another run and each
//     run in flight sees its ShutdownRequested channel closed;
//  3. runs in flight go on with their contexts still alive;
//  4. Run waits up to the graceful shutdown timeout for them;
//  5. then cancels the contexts of runs still going (cause
//     ErrGracefulTimeout). A second SIGINT or SIGTERM cancels them at once
//     (cause ErrForcedShutdown).
//
// Finally the coordinator is stopped (a signal meanwhile cuts that short,
// and counts as a forced shutdown) and the health server last. Run returns
// nil after a clean shutdown, the terminal errors of pipelines that reached
// MaxConsecutiveErrors, and an error wrapping ErrGracefulTimeout or
// ErrForcedShutdown when runs had to be cancelled. When every pipeline has
// finished by itself (Once pipelines that succeeded, pipelines stopped with
// Stop) Run returns too. Nothing starts when validation fails: Run returns
// one error naming every problem. A pool runs once.
func (p *WorkerPool) Run(ctx context.Context) error {
	p.mu.Lock()
	if err := p.validate(); err != nil {
		p.mu.Unlock()
		p.flushAndRunHooks(ctx)
		return err
	}
	if !p.ran.CompareAndSwap(false, true) {
		p.mu.Unlock()
		return fmt.Errorf("%w: a WorkerPool runs once", ErrAlreadyRunning)
	}
	p.mu.Unlock()
	defer p.flushAndRunHooks(ctx)
	cfg := p.cfg
	if cfg.gracefulTimeout == 0 {
		cfg.gracefulTimeout = DefaultGracefulShutdownTimeout
	}
	if cfg.clock == nil {
		cfg.clock = SystemClock{}
	}
	logger := p.logger()
	warnTestClock(logger)
	coord := cfg.coordinator
	if coord == nil {
		coord = NewLocalCoordinator(cfg.clock, WithLocalRunHistory(cfg.runHistory))
	}

	parent := context.WithoutCancel(ctx)
	if cfg.alone {
		parent = ctx
	}
	caps := coord.Capabilities()
	pr := &poolRun{caps: caps, logger: logger}
	if cfg.metrics != nil {
		cfg.metrics.ObservePipelines(len(p.pipelines))
	}
	indexes := make([]int, len(p.pipelines))
	ids := make([]string, 0, len(p.pipelines))
	for i, sp := range p.pipelines {
		indexes[i] = i
		ids = append(ids, sp.PipelineID)
	}
	ec := engineConfig(cfg, coord, caps, logger, parent)
	ec.Capabilities.Backfiller = backfillerOf(caps.Backfiller, p.pipelines)
	pr.eng = engine.New(ec, specsOf(p.pipelines), indexes, true)
	for i, sp := range p.pipelines {
		if !sp.active.CompareAndSwap(nil, pr.eng.Runner(i)) {
			for j := range i {
				p.pipelines[j].active.CompareAndSwap(pr.eng.Runner(j), nil)
			}
			return fmt.Errorf("%w: pipeline %q is started elsewhere", ErrAlreadyRunning, sp.PipelineID)
		}
	}
	defer func() {
		for i, sp := range p.pipelines {
			sp.active.CompareAndSwap(pr.eng.Runner(i), nil)
		}
		pr.state.Store(poolStopped)
	}()
	p.run.Store(pr)

	var signals <-chan os.Signal
	if cfg.signals != nil {
		signals = cfg.signals
	} else if !cfg.noSignals {
		ch, stop := notifyShutdownSignals()
		defer stop()
		signals = ch
	}

	var hs *HealthServer
	if cfg.healthEnabled {
		hs = NewHealthServer(p)
		if err := hs.Listen(cfg.healthAddr); err != nil {
			return fmt.Errorf("runtime: health server: %w", err)
		}
		p.health.Store(hs)
		go func() {
			if err := hs.Serve(); err != nil {
				logger.Error("health server failed", slog.Any("error", err))
			}
		}()
		logger.Info("health server listening", slog.String("addr", hs.Addr()))
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healthStopTimeout)
			defer cancel()
			_ = hs.Shutdown(sctx)
		}()
	}

	for _, log := range cfg.startLogs {
		log(logger)
	}
	reportSchedules(caps, p.pipelines)
	coord.SetLeaseLostCallback(func(pipelineID string, lease Lease) { pr.eng.LeaseLost(pipelineID, engine.Lease(lease)) })
	if fc := caps.FleetController; fc != nil {
		fc.SetTriggerHandler(func(t Trigger) { pr.eng.Trigger(t.PipelineID, t.Params, pr.state.Load() == poolRunning) })
		defer fc.SetTriggerHandler(nil)
	}
	if err := coord.Start(ctx, cfg.workerID, ids); err != nil {
		return fmt.Errorf("runtime: starting coordinator: %w", err)
	}

	pr.eng.Start()
	pr.state.Store(poolRunning)
	pr.eng.Loop()
	close(p.started)
	logger.Info("worker pool started", slog.String("worker_id", cfg.workerID), slog.Int("pipelines", len(p.pipelines)))

	var reason string
	select {
	case <-ctx.Done():
		reason = "context cancelled"
	case sig := <-signals:
		reason = "received " + sig.String()
	case <-pr.eng.Terminal():
		reason = "a pipeline failed terminally"
	case <-pr.eng.AllDone():
		reason = "every pipeline finished"
	}
	// Step 1 of the shutdown; the engine makes steps 2 to 5.
	pr.state.Store(poolShuttingDown)
	runErr := pr.eng.Shutdown(reason, cfg.gracefulTimeout, signals)
	pr.eng.StopDeadlines() // before the coordinator it asks stops

	stopTimeout := coordinatorStopTimeout
	if errors.Is(runErr, ErrForcedShutdown) {
		stopTimeout = forcedStopTimeout // the user asked to exit now
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	// A signal now means the user wants out at once: the coordinator's stop
	// (releasing leases, at most stopTimeout) is cut short.
	var cutShort atomic.Bool
	stopping := make(chan struct{})
	go func() {
		select {
		case sig := <-signals:
			cutShort.Store(true)
			logger.Warn("another signal: cutting the coordinator's stop short", slog.String("signal", sig.String()))
			cancel()
		case <-stopping:
		}
	}()
	if err := coord.Stop(sctx); err != nil {
		logger.Warn("stopping the coordinator failed", slog.Any("error", err))
	}
	close(stopping)
	cancel()
	if cutShort.Load() && !errors.Is(runErr, ErrForcedShutdown) {
		runErr = errors.Join(runErr, fmt.Errorf("%w: a signal cut the coordinator's stop short", ErrForcedShutdown))
	}
	pr.state.Store(poolStopped)

	errs := append(pr.eng.Errors(), runErr)
	logger.Info("worker pool stopped")
	return errors.Join(errs...)
}

// validate names every problem of the pool and its pipelines at once.
func (p *WorkerPool) validate() error {
	var errs []error
	if p.cfg.healthPortErr != nil {
		errs = append(errs, p.cfg.healthPortErr)
	}
	if p.cfg.gracefulTimeout < 0 {
		errs = append(errs, fmt.Errorf("runtime: negative graceful shutdown timeout %s", p.cfg.gracefulTimeout))
	}
	seen := make(map[string]int, len(p.pipelines))
	for i, sp := range p.pipelines {
		n := i + 1
		if sp == nil {
			errs = append(errs, fmt.Errorf("%w: pipeline #%d: nil *ScheduledPipeline", ErrInvalidPipeline, n))
			continue
		}
		for _, problem := range sp.problems() {
			errs = append(errs, fmt.Errorf("%w: pipeline #%d (%q): %w", ErrInvalidPipeline, n, sp.PipelineID, problem))
		}
		if sp.PipelineID == "" {
			continue
		}
		if first, dup := seen[sp.PipelineID]; dup {
			errs = append(errs, fmt.Errorf("%w: pipeline #%d: duplicate PipelineID %q (also pipeline #%d)", ErrInvalidPipeline, n, sp.PipelineID, first))
			continue
		}
		seen[sp.PipelineID] = n
	}
	if len(p.pipelines) == 0 {
		errs = append(errs, fmt.Errorf("%w: no pipelines registered", ErrInvalidPipeline))
	}
	errs = append(errs, afterPoolProblems(p.pipelines, p.cfg.coordinator)...)
	return errors.Join(errs...)
}

// Status returns what /status serves.
func (p *WorkerPool) Status() PoolStatus {
	st := PoolStatus{WorkerID: p.cfg.workerID, State: poolStateName(poolStarting)}
	pr := p.run.Load()
	if pr == nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, sp := range p.pipelines {
			if sp != nil {
				st.Pipelines = append(st.Pipelines, PipelineStatus{PipelineID: sp.PipelineID, Schedule: sp.Schedule.String()})
			}
		}
		return st
	}
	st.State = poolStateName(pr.state.Load())
	st.Pipelines = make([]PipelineStatus, len(p.pipelines))
	for i := range st.Pipelines {
		st.Pipelines[i] = statusOf(pr.eng.Status(i))
	}
	st.Coordinator = coordinatorStatus(pr.caps.StatusReporter, pr.logger)
	return st
}
