package runtime

import (
	"context"
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
	r := benchRunner(clock, coord, sp, nil)
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
