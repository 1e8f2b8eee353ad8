package etl

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Per-sink metrics: the process's counts of what each sink of each
// pipeline took, labelled with the pipeline's id and the sink's name as
// dead letters carry it (its name key or Named name, else the sink's own
// Name such as "file(out.jsonl)", else "sinks[i]"), so the label values
// come from the configured sinks and stay bounded. They are counted for pool runs (a run whose context
// carries a lease, runtime.LeaseFromContext), like agora_records_total.
var (
	descSinkRecords = prometheus.NewDesc("agora_sink_records_total",
		"Records each sink of a record pipeline was given, by outcome: written (accepted) or rejected (refused one by one: dead-lettered).",
		[]string{"pipeline", "sink", "outcome"}, nil)
	descSinkErrors = prometheus.NewDesc("agora_sink_errors_total",
		"Writes and flushes of each sink of a record pipeline that failed as a whole, failing the run.",
		[]string{"pipeline", "sink"}, nil)
)

// sinkCounters are one sink's counts.
type sinkCounters struct {
	written, rejected, errors atomic.Uint64
}

func (c *sinkCounters) wrote(written, rejected int) {
	if c == nil {
		return
	}
	if written > 0 {
		c.written.Add(uint64(written))
	}
	if rejected > 0 {
		c.rejected.Add(uint64(rejected))
	}
}

func (c *sinkCounters) failed() {
	if c != nil {
		c.errors.Add(1)
	}
}

// sinkKey identifies a sink's counters.
type sinkKey struct{ pipeline, sink string }

// sinkMetrics holds every sink's counters, made on the first run of its
// pipeline; a sink's are looked up once per run, not per batch.
var sinkMetrics sync.Map // sinkKey → *sinkCounters

// countersFor returns the counters of sink of pipeline.
func countersFor(pipeline, sink string) *sinkCounters {
	k := sinkKey{pipeline, sink}
	if c, ok := sinkMetrics.Load(k); ok {
		return c.(*sinkCounters)
	}
	c, _ := sinkMetrics.LoadOrStore(k, new(sinkCounters))
	return c.(*sinkCounters)
}

// sinkCollector exposes sinkMetrics.
type sinkCollector struct{}

func (sinkCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSinkRecords
	ch <- descSinkErrors
}

func (sinkCollector) Collect(ch chan<- prometheus.Metric) {
	sinkMetrics.Range(func(k, v any) bool {
		key, c := k.(sinkKey), v.(*sinkCounters)
		ch <- prometheus.MustNewConstMetric(descSinkRecords, prometheus.CounterValue, float64(c.written.Load()), key.pipeline, key.sink, "written")
		ch <- prometheus.MustNewConstMetric(descSinkRecords, prometheus.CounterValue, float64(c.rejected.Load()), key.pipeline, key.sink, "rejected")
		ch <- prometheus.MustNewConstMetric(descSinkErrors, prometheus.CounterValue, float64(c.errors.Load()), key.pipeline, key.sink)
		return true
	})
}

// SinkCollector returns the collector of agora_sink_records_total and
// agora_sink_errors_total. The counters are the process's, whichever pool
// runs the pipelines, so a program gives it to the pools that serve them:
// metrics.WithCollectors(etl.SinkCollector()) (package runtime/metrics)
// or, in a worker's main, worker.WithCollectors. config's pools have it.
func SinkCollector() prometheus.Collector { return sinkCollector{} }
