package metrics

import (
	goruntime "runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// poolCollector turns the pipelines' status into the agora_* counters and
// gauges at scrape time, and serves the run histograms.
type poolCollector struct{ m *Metrics }

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
	descBackfillSlots = prometheus.NewDesc("agora_backfill_slots_total",
		"Backfill slots this replica finished, by outcome: done, skipped (the slot had completed before), failed; present once the replica ran one.",
		[]string{"pipeline", "outcome"}, nil)
	descBackfillRunning = prometheus.NewDesc("agora_backfill_slots_running",
		"Backfill slots this replica runs now; present once the replica ran one.", []string{"pipeline"}, nil)
	descBuildInfo = prometheus.NewDesc("agora_build_info",
		"Always 1; the labels name the agora version the worker was built with (runtime.Version) and the Go version.", []string{"version", "go_version"}, nil)
)

// coordinatorCollects reports whether the pool's coordinator serves its
// own metrics, agora_coordinator_up among them.
func (c *poolCollector) coordinatorCollects() bool {
	p := c.m.pool.Load()
	if p == nil {
		return false
	}
	_, ok := p.Coordinator().(prometheus.Collector)
	return ok
}

// Describe sends the descriptors of every agora_* metric the pool exports.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDuration, descLateness, descRuns, descSkipped, descLeaseHeld, descLeaseLost, descToken, descConsecutive, descRecords, descPaused,
		descLastSuccess, descNextRun, descBackoffUntil, descInterval, descStale, descDeadlines, descBackfillSlots, descBackfillRunning, descBuildInfo} {
		ch <- d
	}
	if !c.coordinatorCollects() {
		ch <- descCoordUp
	}
}

// Collect reads every pipeline's counts. Before Run there are none.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- buildInfo()
	if !c.coordinatorCollects() {
		ch <- prometheus.MustNewConstMetric(descCoordUp, prometheus.GaugeValue, 1)
	}
	p := c.m.pool.Load()
	if p == nil {
		return
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	hists := c.m.hists.Load()
	p.EachPipeline(func(rd *runtime.PipelineReading) {
		st := &rd.Status
		id, o := st.PipelineID, st.Outcomes
		counter(descRuns, o.Succeeded, id, "success")
		counter(descRuns, o.Errored, id, "error")
		counter(descRuns, o.Panicked, id, "panic")
		counter(descRuns, o.Cancelled, id, "cancelled")
		counter(descSkipped, o.SkippedHeld, id, "lease_held")
		counter(descSkipped, st.LeaseErrors, id, "coordinator_unavailable")
		counter(descSkipped, st.SkippedPaused, id, "paused")
		counter(descSkipped, st.MissedSlots, id, "missed")
		counter(descSkipped, o.SkippedCompleted, id, "completed")
		if len(rd.Pipeline.After) > 0 {
			counter(descSkipped, st.SkippedUpstream, id, "upstream")
		}
		gauge(descLeaseHeld, b2f(st.RunningSince != nil), id)
		counter(descLeaseLost, st.LeaseLost, id)
		gauge(descToken, float64(st.LastFencingToken), id)
		gauge(descConsecutive, float64(st.ConsecutiveErrors), id)
		gauge(descPaused, b2f(st.Paused), id)
		counter(descStale, st.StaleWritesRefused, id)
		if rd.Pipeline.Deadline > 0 {
			counter(descDeadlines, st.DeadlinesMissed, id)
		}
		if st.BackfillDone+st.BackfillSkipped+st.BackfillFailed > 0 || st.BackfillRunning > 0 {
			// Only pipelines that backfilled: ten thousand idle ones
			// would otherwise add forty thousand series of zeros.
			counter(descBackfillSlots, st.BackfillDone, id, "done")
			counter(descBackfillSlots, st.BackfillSkipped, id, "skipped")
			counter(descBackfillSlots, st.BackfillFailed, id, "failed")
			gauge(descBackfillRunning, float64(st.BackfillRunning), id)
		}
		if st.LastSuccess != nil {
			gauge(descLastSuccess, unixSeconds(*st.LastSuccess), id)
		}
		if st.NextRun != nil {
			gauge(descNextRun, unixSeconds(*st.NextRun), id)
		}
		if !rd.Planned.IsZero() && st.State == runtime.StateBackoff {
			gauge(descBackoffUntil, unixSeconds(rd.Planned), id)
		}
		if rd.Interval > 0 {
			gauge(descInterval, rd.Interval.Seconds(), id)
		}
		if h := hists.load(rd.Index); h != nil {
			if h.duration.observed() {
				ch <- h.duration.metric(descDuration, runDurationBuckets, id)
			}
			if h.lateness.observed() {
				ch <- h.lateness.metric(descLateness, latenessBuckets, id)
			}
		}
		if r := st.Records; r != (history.RecordCounts{}) {
			counter(descRecords, uint64(r.In), id, "in")
			counter(descRecords, uint64(r.Out), id, "out")
			counter(descRecords, uint64(r.DeadLettered), id, "dead_lettered")
			counter(descRecords, uint64(r.Filtered), id, "filtered")
		}
	})
}

// unixSeconds turns a time into the seconds Prometheus timestamps are
// compared with time() in.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// buildInfo is agora_build_info, worked out once: the build does not
// change while the process runs.
var buildInfo = sync.OnceValue(func() prometheus.Metric {
	return prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, runtime.Version(), goruntime.Version())
})

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
