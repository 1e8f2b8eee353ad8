package runtime_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
	agorametrics "github.com/agora-etl/agora/runtime/metrics"
)

// The scale benchmarks run each contender — agora's WorkerPool, robfig/cron
// v3 alone as the baseline and, for memory, the floor (bench_floor_test.go)
// — in its own process (this test
// binary re-executed), so peak RSS and CPU time are per contender.
//
//	AGORA_BENCH_SECONDS   measured seconds (default 20 busy, 10 idle)
//	AGORA_BENCH_PIPELINES pipelines per contender (default 10000)
const (
	benchHelperEnv    = "AGORA_RUNTIME_BENCH_HELPER"
	benchSecondsEnv   = "AGORA_BENCH_SECONDS"
	benchPipelinesEnv = "AGORA_BENCH_PIPELINES"
	// benchRunHistoryEnv = "off" runs agora without its in-memory run
	// history (on by default, as in a worker).
	benchRunHistoryEnv = "AGORA_BENCH_RUN_HISTORY"
	// benchWarmup is left out of the lateness and CPU figures: startup and
	// the first dispatches are not the steady state being measured.
	benchWarmup = 2 * time.Second
)

// benchResult is what a contender process prints.
type benchResult struct {
	Contender     string  `json:"contender"`
	Mode          string  `json:"mode"`
	Pipelines     int     `json:"pipelines"`
	Seconds       float64 `json:"seconds"`
	Runs          uint64  `json:"runs"`
	P50ms         float64 `json:"p50_ms"`
	P99ms         float64 `json:"p99_ms"`
	P99SecondMs   float64 `json:"p99_median_second_ms"`
	Maxms         float64 `json:"max_ms"`
	PeakRSSMB     float64 `json:"peak_rss_mb"`
	CPUSeconds    float64 `json:"cpu_seconds"`
	CPUPercent    float64 `json:"cpu_percent"`
	MaxGoroutines int     `json:"max_goroutines"`
	IdleGoroutine int     `json:"idle_goroutines"`
}

// latencyHistogram records lateness in 10 µs buckets up to 100 ms and 1 ms
// buckets up to 2 s, with atomic counters so recording costs both
// contenders the same.
type latencyHistogram struct {
	fine   [10000]atomic.Uint32 // 10 µs
	coarse [2000]atomic.Uint32  // 1 ms
	over   atomic.Uint32
	max    atomic.Int64
	n      atomic.Uint64
	// perSecond holds a 100 µs histogram (to 100 ms) per second, so a
	// typical second's p99 can be told from one stalled by the host.
	perSecond [64][1001]atomic.Uint32
}

func (h *latencyHistogram) record(slot int64, d time.Duration) {
	us := d.Microseconds()
	h.perSecond[slot%64][min(us/100, 1000)].Add(1)
	switch {
	case us < 100_000:
		h.fine[us/10].Add(1)
	case us < 2_000_000:
		h.coarse[us/1000].Add(1)
	default:
		h.over.Add(1)
	}
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			break
		}
	}
	h.n.Add(1)
}

// medianSecondP99 returns the median over the measured seconds of each
// second's p99, in ms.
func (h *latencyHistogram) medianSecondP99(from, to int64) float64 {
	var p99s []float64
	for sec := from; sec < to; sec++ {
		b := &h.perSecond[sec%64]
		var total uint64
		for i := range b {
			total += uint64(b[i].Load())
		}
		if total == 0 {
			continue
		}
		target := uint64(math.Ceil(0.99 * float64(total)))
		var seen uint64
		for i := range b {
			seen += uint64(b[i].Load())
			if seen >= target {
				p99s = append(p99s, float64(i+1)*0.1)
				break
			}
		}
	}
	if len(p99s) == 0 {
		return 0
	}
	sort.Float64s(p99s)
	return p99s[len(p99s)/2]
}

// quantile returns the upper edge of the bucket holding quantile q, in ms.
func (h *latencyHistogram) quantile(q float64) float64 {
	total := h.n.Load()
	if total == 0 {
		return 0
	}
	target := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i := range h.fine {
		seen += uint64(h.fine[i].Load())
		if seen >= target {
			return float64(i+1) * 0.01
		}
	}
	for i := 100; i < len(h.coarse); i++ {
		seen += uint64(h.coarse[i].Load())
		if seen >= target {
			return float64(i + 1)
		}
	}
	return float64(h.max.Load()) / 1e6
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// peakRSSMB reads VmHWM, the process's peak resident set.
func peakRSSMB() float64 { return procStatusMB("VmHWM") }

// procStatusMB reads a kB field of /proc/self/status in MB, 0 when absent.
func procStatusMB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// runBenchHelper is the main of a contender process: name is
// "<agora|robfig|floor>:<second|idle>".
func runBenchHelper(name string) int {
	contender, mode, _ := strings.Cut(name, ":")
	n := envInt(benchPipelinesEnv, 10000)
	secs := envInt(benchSecondsEnv, map[string]int{"second": 20, "idle": 10}[mode])
	expr := map[string]string{"second": "* * * * * *", "idle": "0 0 * * * *"}[mode]
	if expr == "" {
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		return 2
	}

	hist := &latencyHistogram{}
	var measureFrom atomic.Int64
	measureFrom.Store(math.MaxInt64)
	job := func() {
		now := time.Now()
		if now.UnixNano() < measureFrom.Load() {
			return
		}
		sec := now.Truncate(time.Second)
		hist.record(sec.Unix(), now.Sub(sec))
	}

	var stop func()
	switch contender {
	case "robfig":
		c := cron.New(cron.WithSeconds())
		for range n {
			if _, err := c.AddFunc(expr, job); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
		c.Start()
		stop = func() { <-c.Stop().Done() }
	case "agora":
		pipeline := runtime.PipelineFunc(func(context.Context) error { job(); return nil })
		factory := func(context.Context) (runtime.Pipeline, error) { return pipeline, nil }
		// With the metrics every worker binary has: their histograms are
		// part of a pool's memory.
		opts := []runtime.PoolOption{runtime.WithLogger(slog.New(slog.DiscardHandler)), runtime.WithSignalHandling(false),
			runtime.WithMetrics(agorametrics.New())}
		if os.Getenv(benchRunHistoryEnv) != "off" {
			// A worker binary's history; left out to tell its memory from
			// the rest.
			opts = append(opts, runtime.WithRunHistory(history.New(history.Policy{})))
		}
		pool := runtime.NewWorkerPool(opts...)
		sched := runtime.MustCron(expr)
		for i := range n {
			pool.Register(&runtime.ScheduledPipeline{PipelineID: "p" + strconv.Itoa(i), Schedule: sched, Factory: factory})
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- pool.Run(ctx) }()
		<-pool.Started()
		stop = func() {
			cancel()
			if err := <-done; err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	case "floor":
		stop = runFloor(n, expr, runtime.PipelineFunc(func(context.Context) error { job(); return nil }))
	default:
		fmt.Fprintln(os.Stderr, "unknown contender", contender)
		return 2
	}

	if os.Getenv("AGORA_BENCH_MEMTRACE") != "" {
		go traceMemory(os.Stderr, 500*time.Millisecond)
	}
	// Measure whole seconds, from half a second after a boundary, so every
	// counted run belongs to a boundary inside the window.
	time.Sleep(benchWarmup)
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1500 * time.Millisecond)))
	if path := os.Getenv("AGORA_BENCH_CPUPROFILE"); path != "" {
		if f, err := os.Create(path + "." + contender + "." + mode); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	idleG := goruntime.NumGoroutine()
	start := time.Now()
	measureFrom.Store(start.UnixNano())
	cpu0 := cpuSeconds()
	maxG := 0
	// Sample often enough to see the peak of a burst; idle, rarely, so the
	// sampling does not dominate the CPU figure.
	sampleEvery := 5 * time.Millisecond
	if mode == "idle" {
		sampleEvery = 100 * time.Millisecond
	}
	tick := time.NewTicker(sampleEvery)
	end := start.Add(time.Duration(secs) * time.Second)
	for now := range tick.C {
		if g := goruntime.NumGoroutine(); g > maxG {
			maxG = g
		}
		if !now.Before(end) {
			break
		}
	}
	tick.Stop()
	measureFrom.Store(math.MaxInt64)
	cpu := cpuSeconds() - cpu0
	elapsed := time.Since(start).Seconds()
	res := benchResult{
		Contender: contender, Mode: mode, Pipelines: n, Seconds: elapsed,
		Runs:  hist.n.Load(),
		P50ms: hist.quantile(0.50), P99ms: hist.quantile(0.99), Maxms: float64(hist.max.Load()) / 1e6,
		P99SecondMs: hist.medianSecondP99(start.Unix()+1, end.Unix()+1),
		PeakRSSMB:   peakRSSMB(), CPUSeconds: cpu, CPUPercent: 100 * cpu / elapsed,
		MaxGoroutines: maxG, IdleGoroutine: idleG,
	}
	if path := os.Getenv("AGORA_BENCH_MEMSTATS"); path != "" {
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		_ = os.WriteFile(path+"."+contender+"."+mode, fmt.Appendf(nil, "HeapAlloc %d\nHeapInuse %d\nHeapSys %d\nHeapReleased %d\nStackSys %d\nSys %d\nNextGC %d\nNumGC %d\nTotalAlloc %d\nMallocs %d\nGCSys %d\nOtherSys %d\n",
			ms.HeapAlloc, ms.HeapInuse, ms.HeapSys, ms.HeapReleased, ms.StackSys, ms.Sys, ms.NextGC, ms.NumGC, ms.TotalAlloc, ms.Mallocs, ms.GCSys, ms.OtherSys), 0o644)
	}
	if path := os.Getenv("AGORA_BENCH_MEMPROFILE"); path != "" {
		if f, err := os.Create(path + "." + contender + "." + mode); err == nil {
			goruntime.GC()
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	stop()
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 2
	}
	return 0
}

// traceMemory prints, every interval, the resident set and the Go heap's
// live, goal, objects and unused bytes, in MB, to tell what a contender's
// peak RSS is made of (AGORA_BENCH_MEMTRACE=1).
func traceMemory(w io.Writer, interval time.Duration) {
	names := []string{"/gc/heap/live:bytes", "/gc/heap/goal:bytes", "/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes", "/memory/classes/heap/free:bytes", "/memory/classes/total:bytes", "/memory/classes/heap/released:bytes"}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	start := time.Now()
	for {
		metrics.Read(samples)
		mb := func(i int) float64 { return float64(samples[i].Value.Uint64()) / (1 << 20) }
		fmt.Fprintf(w, "mem %5.1fs rss %.1f live %.1f goal %.1f objects %.1f unused %.1f free %.1f released %.1f total %.1f\n",
			time.Since(start).Seconds(), procStatusMB("VmRSS"), mb(0), mb(1), mb(2), mb(3), mb(4), mb(6), mb(5))
		time.Sleep(interval)
	}
}

func runContender(b *testing.B, contender, mode string) benchResult {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), benchHelperEnv+"="+contender+":"+mode)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", contender, mode, err, stderr.String())
	}
	var res benchResult
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if json.Unmarshal(sc.Bytes(), &res) == nil && res.Contender != "" {
			return res
		}
	}
	b.Fatalf("%s %s printed no result:\n%s\n%s", contender, mode, stdout.String(), stderr.String())
	return res
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// BenchmarkScale10kEverySecond runs 10,000 pipelines on "* * * * * *" with
// empty runs and reports lateness behind the second boundary, peak RSS, CPU
// and goroutines for agora and for robfig/cron, and agora/robfig ratios.
func BenchmarkScale10kEverySecond(b *testing.B) {
	for range b.N {
		robfig := runContender(b, "robfig", "second")
		agora := runContender(b, "agora", "second")
		floor := runContender(b, "floor", "second")
		for _, r := range []benchResult{robfig, agora, floor} {
			b.Logf("%-6s %d pipelines %.1fs: runs %d, lateness p50 %.2f ms p99 %.2f ms (median second's p99 %.1f ms) max %.2f ms, peak RSS %.1f MB, CPU %.2f s (%.1f%%), goroutines max %d idle %d",
				r.Contender, r.Pipelines, r.Seconds, r.Runs, r.P50ms, r.P99ms, r.P99SecondMs, r.Maxms, r.PeakRSSMB, r.CPUSeconds, r.CPUPercent, r.MaxGoroutines, r.IdleGoroutine)
		}
		b.ReportMetric(agora.P50ms, "agora_p50_ms")
		b.ReportMetric(agora.P99ms, "agora_p99_ms")
		b.ReportMetric(agora.P99SecondMs, "agora_p99_sec_median_ms")
		b.ReportMetric(agora.Maxms, "agora_max_ms")
		b.ReportMetric(agora.PeakRSSMB, "agora_rss_MB")
		b.ReportMetric(agora.CPUPercent, "agora_cpu_%")
		b.ReportMetric(float64(agora.MaxGoroutines), "agora_goroutines")
		b.ReportMetric(robfig.P50ms, "robfig_p50_ms")
		b.ReportMetric(robfig.P99ms, "robfig_p99_ms")
		b.ReportMetric(robfig.P99SecondMs, "robfig_p99_sec_median_ms")
		b.ReportMetric(robfig.Maxms, "robfig_max_ms")
		b.ReportMetric(robfig.PeakRSSMB, "robfig_rss_MB")
		b.ReportMetric(robfig.CPUPercent, "robfig_cpu_%")
		b.ReportMetric(float64(robfig.MaxGoroutines), "robfig_goroutines")
		b.ReportMetric(ratio(agora.P99ms, robfig.P99ms), "p99_ratio")
		b.ReportMetric(ratio(agora.PeakRSSMB, robfig.PeakRSSMB), "rss_ratio")
		b.ReportMetric(ratio(agora.CPUSeconds, robfig.CPUSeconds), "cpu_ratio")
		b.ReportMetric(floor.PeakRSSMB, "floor_rss_MB")
		b.ReportMetric(ratio(floor.PeakRSSMB, robfig.PeakRSSMB), "floor_rss_ratio")
		b.ReportMetric(0, "ns/op")
	}
}

// BenchmarkScale10kHourlyIdle registers 10,000 hourly pipelines that do not
// fire during the measurement and reports peak RSS and CPU for agora and
// robfig/cron.
func BenchmarkScale10kHourlyIdle(b *testing.B) {
	for range b.N {
		robfig := runContender(b, "robfig", "idle")
		agora := runContender(b, "agora", "idle")
		for _, r := range []benchResult{robfig, agora} {
			b.Logf("%-6s %d hourly pipelines idle %.1fs: peak RSS %.1f MB, CPU %.3f s (%.2f%%), goroutines %d",
				r.Contender, r.Pipelines, r.Seconds, r.PeakRSSMB, r.CPUSeconds, r.CPUPercent, r.MaxGoroutines)
		}
		b.ReportMetric(agora.PeakRSSMB, "agora_rss_MB")
		b.ReportMetric(agora.CPUSeconds, "agora_cpu_s")
		b.ReportMetric(robfig.PeakRSSMB, "robfig_rss_MB")
		b.ReportMetric(robfig.CPUSeconds, "robfig_cpu_s")
		b.ReportMetric(ratio(agora.PeakRSSMB, robfig.PeakRSSMB), "rss_ratio")
		b.ReportMetric(0, "ns/op")
	}
}
