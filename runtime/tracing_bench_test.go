package runtime

import (
	"context"
	"log/slog"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discardSpans is a span processor that drops every span, so the benchmark
// measures making the span, not exporting it.
type discardSpans struct{}

func (discardSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardSpans) Shutdown(context.Context) error                  { return nil }
func (discardSpans) ForceFlush(context.Context) error                { return nil }

// BenchmarkRunOverheadTraced is BenchmarkRunOverhead with an SDK tracer
// provider: what the agora.run span adds to one run.
func BenchmarkRunOverheadTraced(b *testing.B) {
	clock := &steppingClock{t: time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)}
	p := PipelineFunc(func(context.Context) error { return nil })
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discardSpans{}))
	sp := &ScheduledPipeline{PipelineID: "p", Schedule: MustCron("* * * * * *"), TracerProvider: tp,
		Factory: func(context.Context) (Pipeline, error) { return p, nil }}
	coord := NewLocalCoordinator(clock)
	_ = coord.Start(context.Background(), "w", []string{"p"})
	r := newRunner(sp, newRunEnv(clock, coord, slog.New(slog.DiscardHandler), context.Background()))
	r.begin(clock.t)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		clock.t = timeOf(r.next)
		if _, done, err := r.step(clock.t); done || err != nil {
			b.Fatal(done, err)
		}
	}
}
