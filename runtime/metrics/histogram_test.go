package metrics

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// histogramCollector exposes one pipeline's run histograms as the pool's
// collector does.
type histogramCollector struct{ h *runHistograms }

func (c histogramCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descDuration
	ch <- descLateness
}

func (c histogramCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- c.h.duration.metric(descDuration, runDurationBuckets, "orders")
	ch <- c.h.lateness.metric(descLateness, latenessBuckets, "orders")
}

// TestHistogramExposition pins the text /metrics gives for the run
// histograms (names, HELP, bucket bounds, cumulative counts, sum, count),
// as it was when they were client_golang histograms.
func TestHistogramExposition(t *testing.T) {
	m := New()
	m.ObservePipelines(1)
	for _, d := range []time.Duration{5 * time.Millisecond, 30 * time.Millisecond, 2 * time.Second, 2 * time.Hour} {
		m.RunEnded(0, d)
	}
	for _, d := range []time.Duration{-time.Millisecond, 3 * time.Millisecond, 20 * time.Second} {
		m.RunStarted(0, d)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(histogramCollector{m.hists.Load().load(0)})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, f := range fams {
		if err := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain)).Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	want := `# HELP agora_run_duration_seconds How long runs took, from the lease being granted to the pipeline closed.
# TYPE agora_run_duration_seconds histogram
agora_run_duration_seconds_bucket{pipeline="orders",le="0.01"} 1
agora_run_duration_seconds_bucket{pipeline="orders",le="0.04"} 2
agora_run_duration_seconds_bucket{pipeline="orders",le="0.16"} 2
agora_run_duration_seconds_bucket{pipeline="orders",le="0.64"} 2
agora_run_duration_seconds_bucket{pipeline="orders",le="2.56"} 3
agora_run_duration_seconds_bucket{pipeline="orders",le="10.24"} 3
agora_run_duration_seconds_bucket{pipeline="orders",le="40.96"} 3
agora_run_duration_seconds_bucket{pipeline="orders",le="163.84"} 3
agora_run_duration_seconds_bucket{pipeline="orders",le="655.36"} 3
agora_run_duration_seconds_bucket{pipeline="orders",le="2621.44"} 3
agora_run_duration_seconds_bucket{pipeline="orders",le="+Inf"} 4
agora_run_duration_seconds_sum{pipeline="orders"} 7202.035
agora_run_duration_seconds_count{pipeline="orders"} 4
# HELP agora_run_lateness_seconds How far behind its scheduled time a cron or every run started.
# TYPE agora_run_lateness_seconds histogram
agora_run_lateness_seconds_bucket{pipeline="orders",le="0.001"} 1
agora_run_lateness_seconds_bucket{pipeline="orders",le="0.004"} 2
agora_run_lateness_seconds_bucket{pipeline="orders",le="0.016"} 2
agora_run_lateness_seconds_bucket{pipeline="orders",le="0.064"} 2
agora_run_lateness_seconds_bucket{pipeline="orders",le="0.256"} 2
agora_run_lateness_seconds_bucket{pipeline="orders",le="1.024"} 2
agora_run_lateness_seconds_bucket{pipeline="orders",le="4.096"} 2
agora_run_lateness_seconds_bucket{pipeline="orders",le="16.384"} 2
agora_run_lateness_seconds_bucket{pipeline="orders",le="65.536"} 3
agora_run_lateness_seconds_bucket{pipeline="orders",le="+Inf"} 3
agora_run_lateness_seconds_sum{pipeline="orders"} 20.003
agora_run_lateness_seconds_count{pipeline="orders"} 3
`
	if buf.String() != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", buf.String(), want)
	}
	// A pipeline's histograms are one small allocation, made once.
	if allocs := testing.AllocsPerRun(100, func() { m.RunEnded(0, time.Second); m.RunStarted(0, time.Millisecond) }); allocs != 0 {
		t.Errorf("%v allocations per observation", allocs)
	}
}

// TestHistogramCountsCarryPast32Bits checks that a bucket past four billion
// observations keeps counting: its 32-bit count carries instead of wrapping.
func TestHistogramCountsCarryPast32Bits(t *testing.T) {
	var h histogram
	h.low[2].Store(math.MaxUint32 - 1)
	h.low[len(latenessBuckets)].Store(math.MaxUint32)
	for range 3 {
		h.observe(latenessBuckets, 0.010) // bucket 2: (0.004, 0.016]
	}
	h.observe(latenessBuckets, 1e6) // +Inf, wraps at once
	if got, want := h.bucket(2), uint64(math.MaxUint32)+2; got != want {
		t.Fatalf("bucket 2 = %d after a wrap, want %d", got, want)
	}
	if got, want := h.bucket(len(latenessBuckets)), uint64(1)<<32; got != want {
		t.Fatalf("+Inf bucket = %d after a wrap, want %d", got, want)
	}
	var m dto.Metric
	if err := h.metric(descLateness, latenessBuckets, "orders").Write(&m); err != nil {
		t.Fatal(err)
	}
	want := uint64(math.MaxUint32) + 2 + 1<<32
	if got := m.GetHistogram().GetSampleCount(); got != want {
		t.Fatalf("exposed count %d, want %d", got, want)
	}
	if got := m.GetHistogram().GetBucket()[2].GetCumulativeCount(); got != uint64(math.MaxUint32)+2 {
		t.Fatalf("exposed cumulative bucket 2 = %d, want %d", got, uint64(math.MaxUint32)+2)
	}
	var empty histogram
	if empty.observed() || !h.observed() {
		t.Fatalf("observed: empty %v, used %v", empty.observed(), h.observed())
	}
}
