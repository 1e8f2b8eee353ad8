package runtime

import (
	"fmt"
	"net"

	"go.opentelemetry.io/otel/trace"

	"github.com/agora-etl/agora/runtime/notify"
)

// Configure applies opts to a pool that has not run yet, after those given
// to NewWorkerPool (later ones win). It is how a program's entry point adds
// what its flags and environment say to a pool built elsewhere, such as the
// one a generated GetWorker returns (package worker does so for -health-port
// and OTEL_*). A nil option is ignored. Once Run or RunNow has started it
// changes nothing and returns an error wrapping ErrAlreadyRunning: runs
// have read the configuration already.
func (p *WorkerPool) Configure(opts ...PoolOption) error {
	p.mu.Lock()
	if p.ran.Load() {
		p.mu.Unlock()
		return fmt.Errorf("%w: Configure on a WorkerPool that has run", ErrAlreadyRunning)
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&p.cfg)
		}
	}
	m := p.cfg.metrics
	p.mu.Unlock()
	bindMetrics(m, p)
	return nil
}

// WithHealthHost serves the health endpoints on host with the port set so
// far (WithHealthPort or WithHealthAddr): how a worker listens on a pod IP or
// on loopback only while its port comes from its code. Without a port the
// pool does not run, and says so.
func WithHealthHost(host string) PoolOption {
	return func(c *poolConfig) {
		if !c.healthEnabled {
			c.healthEnabled = true
			c.healthPortErr = fmt.Errorf("runtime: health host %s names no port, and no health port is set", host)
			return
		}
		_, port, err := net.SplitHostPort(c.healthAddr)
		if err != nil {
			c.healthPortErr = fmt.Errorf("runtime: health address %q: %w", c.healthAddr, err)
			return
		}
		c.healthAddr = net.JoinHostPort(host, port)
	}
}

// Pipelines returns the pipelines registered so far, in order: what a
// worker's -help and pipelines subcommand list.
func (p *WorkerPool) Pipelines() []*ScheduledPipeline {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*ScheduledPipeline, 0, len(p.pipelines))
	for _, sp := range p.pipelines {
		if sp != nil {
			out = append(out, sp)
		}
	}
	return out
}

// TracerProvider returns the provider set with WithTracerProvider, or nil:
// an entry point traces from the environment only a pool its code left
// untraced.
func (p *WorkerPool) TracerProvider() trace.TracerProvider {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.tracerProvider
}

// Coordinator returns the coordinator given with WithCoordinator, or nil
// for the in-process one: a metrics package serves the coordinator's own
// metrics when it has some.
func (p *WorkerPool) Coordinator() Coordinator {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.coordinator
}

// Notifier returns the notifier set with WithNotifier, or nil: an entry
// point builds one from AGORA_NOTIFY_URL only for a pool its code gave none.
func (p *WorkerPool) Notifier() notify.Notifier {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.notifier
}
