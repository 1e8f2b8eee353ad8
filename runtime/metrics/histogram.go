package metrics

import (
	"math"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/internal/buckets"
)

// Metric buckets, in seconds, rounded so le labels print as short decimals.
var (
	// runDurationBuckets span 10 ms to about 45 min.
	runDurationBuckets = buckets.Exponential(0.01, 4, 10)
	// latenessBuckets span 1 ms to about a minute, runtime.LateSlotGrace.
	latenessBuckets = buckets.Exponential(0.001, 4, 9)
)

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

// histogramTable holds every pipeline's histograms by the pipeline's
// index: a slot per registered pipeline, filled on its first run.
type histogramTable []atomic.Pointer[runHistograms]

// at returns the histograms of pipeline i, making them on first use; nil
// for an index outside the table.
func (t *histogramTable) at(i int) *runHistograms {
	if t == nil || i < 0 || i >= len(*t) {
		return nil
	}
	slot := &(*t)[i]
	if h := slot.Load(); h != nil {
		return h
	}
	h := &runHistograms{}
	if !slot.CompareAndSwap(nil, h) {
		return slot.Load()
	}
	return h
}

// load returns the histograms of pipeline i, nil before its first run.
func (t *histogramTable) load(i int) *runHistograms {
	if t == nil || i < 0 || i >= len(*t) {
		return nil
	}
	return (*t)[i].Load()
}
