package config

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/tracing"
)

// wireTracing gives each pipeline whose tracing is enabled a tracer
// provider built by tracing.NewTracerProvider, one per distinct service
// name and exporter, and returns the pool options that hand the providers
// to the pool, which flushes and shuts them down when it stops.
//
// The file is the whole truth about tracing: the pool also gets a no-op
// provider, so pipelines without tracing.enabled stay untraced even when
// an OTEL_EXPORTER_OTLP_*ENDPOINT variable would make worker.Main trace a
// generated worker's runs.
func (f *File) wireTracing(ctx context.Context, sps []*runtime.ScheduledPipeline) ([]runtime.PoolOption, error) {
	built := map[traceKey]*sdktrace.TracerProvider{}
	opts := []runtime.PoolOption{runtime.WithTracerProvider(noop.NewTracerProvider())}
	for i, p := range f.Pipelines {
		if !p.Tracing.Enabled {
			continue
		}
		k := traceKey{p.Tracing.service(f.lookupEnv), p.Tracing.Exporter}
		tp, ok := built[k]
		if !ok {
			var err error
			// A nil provider (no exporter named, no OTLP endpoint set)
			// means the spans would go nowhere; NewTracerProvider has
			// said so in one INFO line.
			tp, err = tracing.NewTracerProvider(ctx, tracing.Config{ServiceName: k.service, Exporter: k.exporter}, nil)
			if err != nil {
				shutdownAll(ctx, built)
				return nil, fmt.Errorf("pipeline %q: %w", p.ID, err)
			}
			built[k] = tp
			if tp != nil {
				opts = append(opts, runtime.WithShutdownHook(tp.Shutdown))
			}
		}
		if tp != nil {
			sps[i].TracerProvider = tp
		}
	}
	return opts, nil
}

// traceKey tells the providers of wireTracing apart.
type traceKey struct{ service, exporter string }

func shutdownAll(ctx context.Context, built map[traceKey]*sdktrace.TracerProvider) {
	for _, tp := range built {
		if tp != nil {
			_ = tp.Shutdown(ctx)
		}
	}
}
