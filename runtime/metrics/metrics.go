// Package metrics is a worker pool's Prometheus metrics: the agora_*
// series of docs/operating.md ("Metrics"), the Go and process collectors,
// and whatever the program adds. A pool is given them with
// runtime.WithMetrics(metrics.New()) and then serves them at /metrics;
// worker.Main and config's pools do so for every worker, so a pool without
// them (runtime alone) carries no Prometheus code.
//
// The counters and gauges are read from the pool's pipelines at scrape
// time (runtime.WorkerPool.EachPipeline); the two run histograms are kept
// here, a few atomic counters per pipeline made on its first run, so a run
// allocates nothing for metrics and ten thousand idle pipelines carry no
// Prometheus objects.
package metrics

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/notify"
)

// Metrics is one pool's Prometheus registry and run histograms. It
// implements runtime.Metrics; give it to one pool.
type Metrics struct {
	pool atomic.Pointer[runtime.WorkerPool]
	// hists are the pipelines' histograms, by index; nil before the pool
	// first runs.
	hists atomic.Pointer[histogramTable]

	mu         sync.Mutex // guards collectors, reg, handler and table growth
	collectors []prometheus.Collector
	reg        *prometheus.Registry
	handler    http.Handler
}

// Option configures Metrics.
type Option func(*Metrics)

// New returns metrics for one pool, configured by opts; nil options are
// ignored. The registry is made on first use (a scrape, Gatherer), so the
// coordinator and notifier the pool has by then are in it.
func New(opts ...Option) *Metrics {
	m := &Metrics{}
	for _, opt := range opts {
		if opt != nil {
			opt(m)
		}
	}
	return m
}

// WithCollectors adds collectors to /metrics (and Gatherer): metrics that
// belong to the process or to a package rather than to the pool, such as
// etl's agora_sink_* (etl.SinkCollector) or etl/fencing's refusals
// (fencing.RefusalCollector). The program says which it serves: the
// config-only worker passes etl's, a generated worker's main can pass them
// with worker.WithCollectors. A collector whose metrics clash with the
// pool's, or one given twice, is left out.
func WithCollectors(cs ...prometheus.Collector) Option {
	return func(m *Metrics) {
		for _, c := range cs {
			if c != nil {
				m.collectors = append(m.collectors, c)
			}
		}
	}
}

// Add adds collectors as WithCollectors does, to metrics already made:
// how an entry point adds its own to metrics a pool was built with. Once
// the registry is made they are registered at once.
func (m *Metrics) Add(cs ...prometheus.Collector) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range cs {
		if c == nil {
			continue
		}
		m.collectors = append(m.collectors, c)
		if m.reg != nil {
			_ = m.reg.Register(c) // a clash is left out, as documented
		}
	}
}

// Bind makes m read p's pipelines; runtime.WithMetrics calls it.
func (m *Metrics) Bind(p *runtime.WorkerPool) { m.pool.Store(p) }

// Gatherer returns the registry served at /metrics, for programs that
// expose it elsewhere. It holds the Go and process collectors, the pool's
// agora_* metrics, those given with WithCollectors and Add and, when the
// pool's coordinator or notifier is a prometheus.Collector, theirs.
func (m *Metrics) Gatherer() prometheus.Gatherer {
	reg, _ := m.registry()
	return reg
}

// ServeHTTP serves the registry in the Prometheus exposition format: the
// health server's GET /metrics.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, h := m.registry()
	h.ServeHTTP(w, r)
}

// registry returns the registry and its handler, made on first use.
func (m *Metrics) registry() (*prometheus.Registry, http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reg != nil {
		return m.reg, m.handler
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&poolCollector{m: m},
	)
	for _, c := range m.collectors {
		// One whose metrics clash with the pool's is left out, as documented.
		_ = reg.Register(c)
	}
	if p := m.pool.Load(); p != nil {
		if c, ok := p.Coordinator().(prometheus.Collector); ok {
			// A coordinator with metrics of its own (the Redis one) adds
			// them; a second pool on the same coordinator would register
			// them twice, which the registry refuses: then they are left
			// out of this one.
			_ = reg.Register(c)
		}
		switch n := p.Notifier().(type) {
		case prometheus.Collector:
			_ = reg.Register(n)
		case interface{ Stats() notify.Stats }:
			_ = reg.Register(notifyCollector{n})
		}
	}
	m.reg = reg
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m.reg, m.handler
}

// ObservePipelines makes room for n pipelines' histograms, keeping those
// already made: the pool calls it before any run, so no run writes to a
// table being replaced.
func (m *Metrics) ObservePipelines(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.hists.Load()
	if old != nil && len(*old) >= n {
		return
	}
	t := make(histogramTable, n)
	if old != nil {
		for i := range *old {
			t[i].Store((*old)[i].Load())
		}
	}
	m.hists.Store(&t)
}

// RunStarted adds a scheduled run's lateness to its pipeline's
// agora_run_lateness_seconds; an early start counts as on time.
func (m *Metrics) RunStarted(pipeline int, lateness time.Duration) {
	if h := m.hists.Load().at(pipeline); h != nil {
		h.lateness.observe(latenessBuckets, max(lateness, 0).Seconds())
	}
}

// RunEnded adds a run's duration to its pipeline's
// agora_run_duration_seconds.
func (m *Metrics) RunEnded(pipeline int, took time.Duration) {
	if h := m.hists.Load().at(pipeline); h != nil {
		h.duration.observe(runDurationBuckets, took.Seconds())
	}
}

var _ runtime.Metrics = (*Metrics)(nil)
