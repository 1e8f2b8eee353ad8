//go:build !agora_nootlp

package worker

import "github.com/agora-etl/agora/tracing"

// otlpFromEnv traces a worker over OTLP when the environment names an
// endpoint.
var otlpFromEnv = tracing.FromEnv
