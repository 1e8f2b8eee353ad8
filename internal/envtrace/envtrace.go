// Package envtrace holds what the worker entry (package worker) and package
// tracing share about tracing from the OTEL_* environment, without the
// exporter: a worker built with -tags agora_nootlp reads the same variables
// and says it does not trace, and links no gRPC or protobuf (about 140
// packages) for it.
package envtrace

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// Standard OpenTelemetry environment variables read here.
const (
	// EnvEndpoint is the OTLP base URL ("/v1/traces" is appended).
	EnvEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// EnvTracesEndpoint is the OTLP URL for traces, used as it is.
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	// EnvServiceName names the service when no name is configured.
	EnvServiceName = "OTEL_SERVICE_NAME"
	// EnvSDKDisabled set to "true" turns tracing off.
	EnvSDKDisabled = "OTEL_SDK_DISABLED"
)

// EndpointConfigured reports whether an OTLP endpoint is set in the
// environment (EnvEndpoint or EnvTracesEndpoint, non-empty).
func EndpointConfigured() bool {
	return os.Getenv(EnvEndpoint) != "" || os.Getenv(EnvTracesEndpoint) != ""
}

// Disabled reports whether EnvSDKDisabled turns tracing off.
func Disabled() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(EnvSDKDisabled)), "true")
}

// ServiceName returns name, or when it is empty OTEL_SERVICE_NAME, or else
// the program's file name.
func ServiceName(name string) string {
	if name != "" {
		return name
	}
	if env := os.Getenv(EnvServiceName); env != "" {
		return env
	}
	return filepath.Base(os.Args[0])
}

// Provider is a tracer provider the worker entry owns: the pool flushes it
// and shuts it down as it stops.
type Provider interface {
	trace.TracerProvider
	Shutdown(ctx context.Context) error
}

// Builder builds the provider of a worker traced from the environment. A
// nil Provider with a nil error means spans go nowhere.
type Builder func(ctx context.Context, logger *slog.Logger) (Provider, error)
