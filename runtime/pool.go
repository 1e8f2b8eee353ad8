package runtime

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// DefaultGracefulShutdownTimeout is how long runs in flight may take to finish
// after a shutdown begins before their contexts are cancelled.
const DefaultGracefulShutdownTimeout = 30 * time.Second

// WorkerPool runs every registered ScheduledPipeline concurrently, with
// leases from a Coordinator, a health server and graceful shutdown.
type WorkerPool struct {
	pipelines []*ScheduledPipeline
	cfg       poolConfig
}

type poolConfig struct {
	healthPort      int
	healthEnabled   bool
	gracefulTimeout time.Duration
	coordinator     Coordinator
	logger          *slog.Logger
	workerID        string
	clock           Clock
}

// PoolOption configures a WorkerPool.
type PoolOption func(*poolConfig)

// WithHealthPort serves /healthz, /readyz and /status on port (0 picks a free
// port; see WorkerPool.HealthAddr).
func WithHealthPort(port int) PoolOption {
	return func(c *poolConfig) { c.healthPort, c.healthEnabled = port, true }
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

// NewWorkerPool returns an empty pool configured by opts.
func NewWorkerPool(opts ...PoolOption) *WorkerPool {
	p := &WorkerPool{}
	for _, opt := range opts {
		opt(&p.cfg)
	}
	return p
}

// Register adds sp to the pool and returns the pool, for chaining.
func (p *WorkerPool) Register(sp *ScheduledPipeline) *WorkerPool {
	p.pipelines = append(p.pipelines, sp)
	return p
}

// Run runs every registered pipeline until ctx is cancelled, a signal arrives
// or a pipeline fails terminally.
func (p *WorkerPool) Run(ctx context.Context) error {
	return errors.New("runtime: not implemented")
}
