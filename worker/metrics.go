package worker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
)

// serveMetrics gives pool the Prometheus metrics every worker binary
// serves at /metrics (runtime/metrics), unless its code gave it metrics
// already; the entry's collectors (WithCollectors) join the pool's when
// those are runtime/metrics' too. A bare runtime pool serves no /metrics,
// so this is where a worker's come from.
func serveMetrics(pool *runtime.WorkerPool, cs []prometheus.Collector) error {
	switch m := pool.Metrics().(type) {
	case nil:
		return pool.Configure(runtime.WithMetrics(metrics.New(metrics.WithCollectors(cs...))))
	case *metrics.Metrics:
		m.Add(cs...)
	}
	return nil
}
