package runtime

import (
	"net/http"
	"time"
)

// RunObserver is told how late each run of a pool's pipelines started and
// how long it took, as it happens: what a metrics package keeps in
// histograms, which the status does not hold. Pipelines are named by their
// index among the pool's registered pipelines (Pipelines,
// PipelineReading.Index), so an observer keeps per-pipeline state in a
// slice rather than a map. Its methods are called from the runs'
// goroutines, on every run's path: they must be safe for concurrent use,
// must not block and should not allocate.
type RunObserver interface {
	// ObservePipelines is called as Run or RunNow begins, before any of
	// their runs, with the number of registered pipelines: every index
	// given later is below n.
	ObservePipelines(n int)
	// RunStarted is called once a run holds its lease and starts, with
	// how far behind its scheduled time it started (negative when early).
	// Runs no schedule planned (retries, runs asked for now, continuous
	// and once pipelines) have no scheduled time and are not told of.
	RunStarted(pipeline int, lateness time.Duration)
	// RunEnded is called once a run ended and its lease was given back,
	// with how long it took from the lease being granted.
	RunEnded(pipeline int, took time.Duration)
}

// Metrics is what a pool serves at /metrics and tells of its runs: the
// pool keeps no metrics of its own, so a program that exports none links
// no exporter. Package runtime/metrics is the Prometheus one, which
// worker.Main and config's pools give every worker; it reads the
// counters at scrape time with EachPipeline.
type Metrics interface {
	RunObserver
	// ServeHTTP serves GET /metrics of the health server.
	http.Handler
	// Bind is called with the pool as the pool is given m (WithMetrics),
	// so m reads that pool's pipelines. A Metrics serves one pool.
	Bind(p *WorkerPool)
}

// WithMetrics makes the pool tell m of its runs and serve m at /metrics.
// Without it (the default for a pool built with NewWorkerPool alone),
// the health server answers /metrics with 404 Not Found and runs are timed
// by nobody. A nil m takes back one given before.
func WithMetrics(m Metrics) PoolOption {
	return func(c *poolConfig) { c.metrics = m }
}

// Metrics returns the metrics given with WithMetrics, or nil: an entry
// point gives the default ones only to a pool its code gave none.
func (p *WorkerPool) Metrics() Metrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.metrics
}

// bindMetrics tells m, the metrics configured, which pool they serve;
// called after options are applied, without the pool's lock, so Bind may
// read the pool.
func bindMetrics(m Metrics, p *WorkerPool) {
	if m != nil {
		m.Bind(p)
	}
}
