package runtime

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// steppingClock advances one second per Now call so every step finds its
// slot due.
type steppingClock struct{ t time.Time }

func (c *steppingClock) Now() time.Time { return c.t }

func (c *steppingClock) NewTimer(d time.Duration) Timer { return SystemClock{}.NewTimer(d) }

// BenchmarkRunOverhead measures what the pool adds around one empty run of a
// per-second cron pipeline: lease, context, factory, Run, release, the run
// history a worker binary keeps, status and planning the next slot.
// BenchmarkRunOverheadMetrics (runtime_test) measures the same with
// runtime/metrics told of every run.
func BenchmarkRunOverhead(b *testing.B) { benchRunOverhead(b, nil) }

// benchRunOverhead is BenchmarkRunOverhead with obs told of the runs.
func benchRunOverhead(b *testing.B, obs RunObserver) {
	clock := &steppingClock{t: time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)}
	p := PipelineFunc(func(context.Context) error { return nil })
	sp := &ScheduledPipeline{PipelineID: "p", Schedule: MustCron("* * * * * *"), Factory: func(context.Context) (Pipeline, error) { return p, nil }}
	coord := NewLocalCoordinator(clock, WithLocalRunHistory(history.New(history.Policy{})))
	_ = coord.Start(context.Background(), "w", []string{"p"})
	r := benchRunner(clock, coord, sp, obs)
	r.Begin(clock.t)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		clock.t = r.Next()
		if _, done, err := r.Step(clock.t); done || err != nil {
			b.Fatal(done, err)
		}
	}
}

// benchRunner is the engine's runner of sp alone, with coord's leases and
// obs told of its runs, for benchmarks that drive it without a dispatcher.
func benchRunner(clock Clock, coord Coordinator, sp *ScheduledPipeline, obs RunObserver) *engine.Runner {
	cfg := engineConfig(poolConfig{clock: clock}, coord, coord.Capabilities(), slog.New(slog.DiscardHandler), context.Background())
	if obs != nil {
		obs.ObservePipelines(1)
		cfg.Observer = obs
	}
	return engine.New(cfg, specsOf([]*ScheduledPipeline{sp}), []int{0}, false).Runner(0)
}
