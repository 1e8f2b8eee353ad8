//go:build agora_nootlp

package worker

import (
	"context"
	"log/slog"

	"github.com/agora-etl/agora/internal/envtrace"
)

// otlpFromEnv stands in for the exporter this build leaves out: it says so
// when the environment names an endpoint, and traces nothing.
var otlpFromEnv envtrace.Builder = func(_ context.Context, logger *slog.Logger) (envtrace.Provider, error) {
	logger.Warn("runs are not traced: "+envtrace.EnvEndpoint+" is set, but this worker was built with -tags agora_nootlp, which leaves the OTLP exporter out",
		slog.String("hint", "build without the tag to export traces"))
	return nil, nil
}
