package runtime

import (
	"errors"
	"math"
	"net/http"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agora-etl/agora/internal/buckets"
)

// Metric buckets, in seconds, rounded so le labels print as short decimals.
var (
	// runDurationBuckets span 10 ms to about 45 min.
	runDurationBuckets = buckets.Exponential(0.01, 4, 10)
	// latenessBuckets span 1 ms to about a minute, LateSlotGrace.
	latenessBuckets = buckets.Exponential(0.001, 4, 9)
)

// poolMetrics is a pool's Prometheus registry. Every agora_* metric is read
// from the runners at scrape time (poolCollector): counters and gauges from
// the status a run updates anyway, the two run histograms from a few
// atomic counters per pipeline (runHistograms), so a run allocates nothing
// for metrics and ten thousand pipelines carry no Prometheus objects.
type poolMetrics struct {
	reg     *prometheus.Registry
	handler http.Handler
}

func newPoolMetrics(p *WorkerPool) *poolMetrics {
	m := &poolMetrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&poolCollector{pool: p},
	)
	for _, c := range p.cfg.collectors {
		// One whose metrics clash with the pool's is left out, as documented.
		_ = m.reg.Register(c)
	}
	if c, ok := p.cfg.coordinator.(prometheus.Collector); ok {
		// A coordinator with metrics of its own (the Redis one) adds them;
		// a second pool on the same coordinator would register them twice,
		// which the registry refuses: then they are left out of this one.
		_ = m.reg.Register(c)
	}
	if c, ok := p.cfg.notifier.(prometheus.Collector); ok {
		_ = m.reg.Register(c)
	}
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// WithCollectors adds collectors to the pool's /metrics (and Gatherer):
// metrics that belong to the process or to a package rather than to the
// pool, such as etl's agora_sink_* (etl.SinkCollector) or etl/fencing's
// refusals (fencing.RefusalCollector). The program says which it serves: the
// config-only worker passes etl's, a generated worker's main can pass them
// with worker.WithCollectors. A collector whose metrics clash with the
// pool's, or one given twice, is left out.
func WithCollectors(cs ...prometheus.Collector) PoolOption {
	return func(c *poolConfig) {
		for _, col := range cs {
			if col != nil {
				c.collectors = append(c.collectors, col)
			}
		}
	}
}

// metrics returns the pool's metrics, made on first use.
func (p *WorkerPool) metrics() *poolMetrics {
	p.metricsOnce.Do(func() { p.metricsState = newPoolMetrics(p) })
	return p.metricsState
}

// Gatherer returns the pool's Prometheus metrics (served by the health
// server at /metrics), for programs that expose them elsewhere. The
// registry holds the Go and process collectors, the pool's agora_* metrics,
// those given with WithCollectors and, when the coordinator is a
// prometheus.Collector, the coordinator's.
func (p *WorkerPool) Gatherer() prometheus.Gatherer { return p.metrics().reg }

// histogram is a fixed-bucket histogram of one pipeline, safe for
// concurrent use without locks. Its bucket bounds are not kept in it: they
// are the same for every pipeline (runDurationBuckets, latenessBuckets)
// and passed in, so ten thousand pipelines do not carry ten thousand
// copies of the slice.
//
// Counts are kept in 32 bits, which holds four billion runs of a pipeline
// in one bucket (136 years at one a second); high holds the carries past
// that, made at the first wrap, so counts never wrap. Two pipelines'
// histograms then take 128 bytes, not 192: ten thousand pipelines' worth
// is what a pool's memory is mostly made of. A scrape that meets a carry
// half done reads one bucket 2^32 low once, which Prometheus takes as a
// counter reset.
type histogram struct {
	// low is each bucket's count; the one after the last bound counts the
	// observations above every bound (+Inf).
	low     [maxBuckets + 1]atomic.Uint32
	high    atomic.Pointer[[maxBuckets + 1]atomic.Uint32]
	sumBits atomic.Uint64 // float64 bits of the sum of observations
}

// maxBuckets is the most buckets a histogram has; kept in the struct, a
// pipeline's histograms are one allocation.
const maxBuckets = 10

func (h *histogram) observe(buckets []float64, v float64) {
	i := len(buckets) // +Inf
	for j, upper := range buckets {
		if v <= upper {
			i = j
			break
		}
	}
	if h.low[i].Add(1) == 0 {
		h.carry(i)
	}
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// carry adds 2^32 to bucket i, whose low count has just wrapped to 0.
func (h *histogram) carry(i int) {
	hi := h.high.Load()
	if hi == nil {
		h.high.CompareAndSwap(nil, new([maxBuckets + 1]atomic.Uint32))
		hi = h.high.Load()
	}
	hi[i].Add(1)
}

// bucket returns the count of bucket i (not cumulative).
func (h *histogram) bucket(i int) uint64 {
	n := uint64(h.low[i].Load())
	if hi := h.high.Load(); hi != nil {
		n += uint64(hi[i].Load()) << 32
	}
	return n
}

// observed reports whether h holds any observation.
func (h *histogram) observed() bool {
	if h.high.Load() != nil {
		return true
	}
	for i := range h.low {
		if h.low[i].Load() != 0 {
			return true
		}
	}
	return false
}

// metric returns h, of the given bucket bounds, as a Prometheus histogram
// with cumulative buckets.
func (h *histogram) metric(desc *prometheus.Desc, buckets []float64, labels ...string) prometheus.Metric {
	cum := make(map[float64]uint64, len(buckets))
	var n uint64
	for i, upper := range buckets {
		n += h.bucket(i)
		cum[upper] = n
	}
	n += h.bucket(len(buckets))
	return prometheus.MustNewConstHistogram(desc, n, math.Float64frombits(h.sumBits.Load()), cum, labels...)
}

// runHistograms are one pipeline's duration and lateness histograms, made
// on its first run, so idle pipelines cost a nil pointer.
type runHistograms struct {
	duration, lateness histogram
}

// histograms returns r's histograms, making them on first use.
func (r *runner) histograms() *runHistograms {
	if h := r.hist.Load(); h != nil {
		return h
	}
	h := &runHistograms{}
	if !r.hist.CompareAndSwap(nil, h) {
		return r.hist.Load()
	}
	return h
}

func (m *poolMetrics) observeDuration(r *runner, d time.Duration) {
	if m != nil {
		r.histograms().duration.observe(runDurationBuckets, d.Seconds())
	}
}

func (m *poolMetrics) observeLateness(r *runner, d time.Duration) {
	if m != nil {
		r.histograms().lateness.observe(latenessBuckets, max(d, 0).Seconds())
	}
}

// counted adds a finished run to the runner's counts: how it ended and the
// records it moved.
func (r *runner) counted(runErr, cancelCause error, records RecordCounts) {
	panicked := runErr != nil && isPanic(runErr)
	stale := runErr != nil && errors.Is(runErr, ErrStaleWrite)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case runErr == nil:
		r.st.ok++
	case errors.Is(runErr, ErrSlotCompleted):
		// Refused because the slot ran elsewhere: counted as a completed
		// slot skipped (publish), not as a failed run.
	case panicked:
		r.rareLocked().panicked++
	case cancelCause != nil:
		r.rareLocked().cancelled++
	default:
		r.rareLocked().errored++
	}
	if stale {
		r.rareLocked().staleRefused++
	}
	if !records.IsZero() {
		rs := r.rareLocked()
		rs.records = rs.records.Add(records)
	}
}

// poolCollector turns the runners' status into the agora_* counters and
// gauges at scrape time.
type poolCollector struct{ pool *WorkerPool }

var (
	descRuns = prometheus.NewDesc("agora_runs_total",
		"Finished runs by how they ended: success, error, panic or cancelled.", []string{"pipeline", "status"}, nil)
	descSkipped = prometheus.NewDesc("agora_attempts_skipped_total",
		"Attempts not run, by reason: lease_held (another replica has it), coordinator_unavailable, paused, missed (cron slots past the grace), completed (the slot already ran), upstream (an upstream had not completed the slot in time).",
		[]string{"pipeline", "reason"}, nil)
	descLeaseHeld = prometheus.NewDesc("agora_lease_held",
		"1 while this replica holds the pipeline's lease for a run, else 0.", []string{"pipeline"}, nil)
	descLeaseLost = prometheus.NewDesc("agora_lease_lost_total",
		"Leases this replica lost while holding them (expired, taken over, not renewable).", []string{"pipeline"}, nil)
	descToken = prometheus.NewDesc("agora_fencing_token",
		"The fencing token of the last lease this replica held for the pipeline; 0 before any fenced lease.", []string{"pipeline"}, nil)
	descConsecutive = prometheus.NewDesc("agora_consecutive_errors",
		"Failed runs since the pipeline's last success (the fleet's, with the Redis coordinator).", []string{"pipeline"}, nil)
	descRecords = prometheus.NewDesc("agora_records_total",
		"Records moved by record pipelines, by direction: in (read), out (written), dead_lettered, filtered (left out by a filter transform).", []string{"pipeline", "direction"}, nil)
	descPaused = prometheus.NewDesc("agora_pipeline_paused",
		"1 while the pipeline is paused fleet-wide, else 0.", []string{"pipeline"}, nil)
	descDuration = prometheus.NewDesc("agora_run_duration_seconds",
		"How long runs took, from the lease being granted to the pipeline closed.", []string{"pipeline"}, nil)
	descLateness = prometheus.NewDesc("agora_run_lateness_seconds",
		"How far behind its scheduled time a cron or every run started.", []string{"pipeline"}, nil)
	descCoordUp = prometheus.NewDesc("agora_coordinator_up",
		"1 while the coordinator can grant leases; the in-process one always can.", nil, nil)
	descLastSuccess = prometheus.NewDesc("agora_last_success_timestamp_seconds",
		"When the last successful run on this replica ended, in Unix seconds; absent before the first.", []string{"pipeline"}, nil)
	descNextRun = prometheus.NewDesc("agora_next_run_timestamp_seconds",
		"When the next attempt is due, in Unix seconds (the end of the backoff after a failed run); absent while a run is in flight, while the pipeline is paused and once it stopped.", []string{"pipeline"}, nil)
	descBackoffUntil = prometheus.NewDesc("agora_backoff_until_timestamp_seconds",
		"When the backoff after a failed run ends (the fleet's, with the Redis coordinator), in Unix seconds; absent when the pipeline is not backing off.", []string{"pipeline"}, nil)
	descInterval = prometheus.NewDesc("agora_schedule_interval_seconds",
		"The time between two runs the schedule plans: an every pipeline's interval, the gap between a cron pipeline's next two slots; absent for continuous and once.",
		[]string{"pipeline"}, nil)
	descStale = prometheus.NewDesc("agora_stale_writes_refused_total",
		"Runs that failed because a fenced store refused their write as stale (errors matching runtime.ErrStaleWrite, such as fencing.ErrStaleWriter).",
		[]string{"pipeline"}, nil)
	descDeadlines = prometheus.NewDesc("agora_deadlines_missed_total",
		"Slots that had not succeeded within the pipeline's deadline of their fire time, counted by the replica that reported them; only for pipelines with a deadline.",
		[]string{"pipeline"}, nil)
	descBuildInfo = prometheus.NewDesc("agora_build_info",
		"Always 1; the labels name the agora version the worker was built with (runtime.Version) and the Go version.", []string{"version", "go_version"}, nil)
)

// Describe sends the descriptors of every agora_* metric the pool exports.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDuration, descLateness, descRuns, descSkipped, descLeaseHeld, descLeaseLost, descToken, descConsecutive, descRecords, descPaused,
		descLastSuccess, descNextRun, descBackoffUntil, descInterval, descStale, descDeadlines, descBuildInfo} {
		ch <- d
	}
	if _, ok := c.pool.cfg.coordinator.(prometheus.Collector); !ok {
		ch <- descCoordUp
	}
}

// Collect reads every runner's counts. Before Run there are none.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- buildInfo()
	if _, ok := c.pool.cfg.coordinator.(prometheus.Collector); !ok {
		ch <- prometheus.MustNewConstMetric(descCoordUp, prometheus.GaugeValue, 1)
	}
	pr := c.pool.run.Load()
	if pr == nil {
		return
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	now := pr.env.now()
	for _, r := range pr.runners {
		id := r.id()
		r.mu.Lock()
		st, rs := r.st, r.rareCopy()
		held := r.ctx != nil
		r.mu.Unlock()
		counter(descRuns, st.ok, id, "success")
		counter(descRuns, rs.errored, id, "error")
		counter(descRuns, rs.panicked, id, "panic")
		counter(descRuns, rs.cancelled, id, "cancelled")
		counter(descSkipped, rs.skippedHeld, id, "lease_held")
		counter(descSkipped, rs.leaseErrors, id, "coordinator_unavailable")
		counter(descSkipped, rs.skippedPaused, id, "paused")
		counter(descSkipped, rs.missed, id, "missed")
		counter(descSkipped, rs.skippedDone, id, "completed")
		if len(r.sp.After) > 0 {
			counter(descSkipped, rs.skippedUpstream, id, "upstream")
		}
		gauge(descLeaseHeld, b2f(held), id)
		counter(descLeaseLost, rs.leaseLost, id)
		gauge(descToken, float64(st.lastToken), id)
		gauge(descConsecutive, float64(st.consecutive), id)
		gauge(descPaused, b2f(pr.env.paused(r)), id)
		counter(descStale, rs.staleRefused, id)
		if r.sp.Deadline > 0 {
			counter(descDeadlines, rs.deadlinesMissed, id)
		}
		if st.lastSuccess != 0 {
			gauge(descLastSuccess, unixSeconds(st.lastSuccess), id)
		}
		if st.next != 0 && !pr.env.paused(r) {
			gauge(descNextRun, unixSeconds(st.next), id)
		}
		if st.next != 0 && st.state == StateBackoff {
			gauge(descBackoffUntil, unixSeconds(st.next), id)
		}
		if iv := scheduleInterval(r.sp.Schedule, st.next, now); iv > 0 {
			gauge(descInterval, iv.Seconds(), id)
		}
		if h := r.hist.Load(); h != nil {
			if h.duration.observed() {
				ch <- h.duration.metric(descDuration, runDurationBuckets, id)
			}
			if h.lateness.observed() {
				ch <- h.lateness.metric(descLateness, latenessBuckets, id)
			}
		}
		if rs.records != (RecordCounts{}) {
			counter(descRecords, uint64(rs.records.In), id, "in")
			counter(descRecords, uint64(rs.records.Out), id, "out")
			counter(descRecords, uint64(rs.records.DeadLettered), id, "dead_lettered")
			counter(descRecords, uint64(rs.records.Filtered), id, "filtered")
		}
	}
}

// unixSeconds turns Unix nanoseconds into the seconds Prometheus
// timestamps are compared with time() in.
func unixSeconds(ns int64) float64 { return float64(ns) / 1e9 }

// scheduleInterval is the time between two planned runs of s: an every
// schedule's interval; for cron the gap between the slot after next (a
// plan in Unix ns; now when there is none) and the one after it, so a
// schedule with uneven gaps ("0 9 * * 1-5") reports the gap ahead. 0 for
// continuous, once and cron schedules that never fire again.
func scheduleInterval(s Schedule, next int64, now time.Time) time.Duration {
	switch s.Kind() {
	case ScheduleEvery:
		return s.Interval()
	case ScheduleCron:
		from := timeOf(next)
		if from.IsZero() {
			from = now
		}
		a := s.Next(from)
		if a.IsZero() {
			return 0
		}
		if b := s.Next(a); !b.IsZero() {
			return b.Sub(a)
		}
	}
	return 0
}

// buildInfo is agora_build_info, worked out once: the build does not
// change while the process runs.
var buildInfo = sync.OnceValue(func() prometheus.Metric {
	return prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, Version(), goruntime.Version())
})

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// metricsOnce guards metricsState; kept here with the rest of the metrics.
type metricsHolder struct {
	metricsOnce  sync.Once
	metricsState *poolMetrics
}

// isPanic reports whether err comes from a panic. Apart from counted, so
// the *PanicError target is allocated only for failed runs.
func isPanic(err error) bool {
	var pe *PanicError
	return errors.As(err, &pe)
}
