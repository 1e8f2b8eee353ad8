//go:build agora_nootlp

package worker

import "github.com/agora-etl/agora/internal/envtrace"

// otlpFromEnv is nil: this build leaves the OTLP exporter out.
var otlpFromEnv envtrace.Builder
