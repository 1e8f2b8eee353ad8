package config

import (
	"log/slog"

	"github.com/agora-etl/agora/runtime"
)

// wireTracing gives each pipeline whose tracing is enabled its tracer
// provider.
//
// INTEGRATION (tracing): once runtime.ScheduledPipeline.TracerProvider
// and package tracing are on main, build one provider per distinct
// (service name, exporter) with
//
//	tracing.NewProvider(ctx, tracing.Config{ServiceName: p.Tracing.service(f.lookupEnv), Exporter: p.Tracing.Exporter}, logger)
//
// set sps[i].TracerProvider, and have the pool shut the providers down (so
// spans are flushed) when it stops. Until then an enabled tracing table is
// checked but has no effect, and this says so once per pipeline.
func (f *File) wireTracing(sps []*runtime.ScheduledPipeline) {
	for i, p := range f.Pipelines {
		if p.Tracing.Enabled {
			slog.Warn("tracing is enabled in the configuration but not available in this build; runs are not traced",
				slog.String("pipeline", sps[i].PipelineID), slog.String("service_name", p.Tracing.service(f.lookupEnv)))
		}
	}
}
