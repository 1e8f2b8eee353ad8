package runtime

import (
	"os"
	"time"
)

// Test-only access to internals for the external runtime_test package, which
// needs clocktest (and clocktest imports runtime).

// BenchRunOverhead is BenchmarkRunOverhead with obs told of every run.
var BenchRunOverhead = benchRunOverhead

// WithSignalChannel makes Run read shutdown signals from ch.
func WithSignalChannel(ch <-chan os.Signal) PoolOption { return withSignalChannel(ch) }

// Running reports whether sp is started (alone or in a pool).
func (sp *ScheduledPipeline) Running() bool { return sp.active.Load() != nil }

// Quiet reports whether no run is in flight after the dispatcher has handled
// everything pushed so far. ok is false before Run started the dispatcher or
// after it stopped.
func (p *WorkerPool) Quiet() (quiet, ok bool) {
	pr := p.run.Load()
	if pr == nil {
		return false, false
	}
	return pr.eng.Quiet()
}

// Quiet is WorkerPool.Quiet for a pipeline Start runs: ok is false when it
// is not started.
func (sp *ScheduledPipeline) Quiet() (quiet, ok bool) {
	r := sp.active.Load()
	if r == nil {
		return false, false
	}
	return r.Quiet()
}

// Executors returns how many executor goroutines the pool has and how many
// are inside an attempt.
func (p *WorkerPool) Executors() (total, busy int64) {
	pr := p.run.Load()
	if pr == nil {
		return 0, 0
	}
	return pr.eng.Executors()
}

// NeverFiringCron is a cron schedule that never fires. Cron refuses such an
// expression; the pool still guards against one, which this reaches.
func NeverFiringCron() Schedule {
	return Schedule{kind: ScheduleCron, expr: "0 0 30 2 *", spec: neverNexter{}}
}

type neverNexter struct{}

func (neverNexter) Next(time.Time) time.Time { return time.Time{} }

// TestClockBuild says whether the test binary was built with -tags
// agora_testclock.
const TestClockBuild = testClockBuild
