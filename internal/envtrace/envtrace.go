// Package envtrace joins the worker entry (runtime.RunMainTo) to the OTLP
// exporter without runtime importing the exporter. The exporter brings in
// gRPC and protobuf (about 140 packages); runtime is imported by every
// generated worker.go and by every package holding pipelines, and stays
// light. The entry asks this package whether the environment names an OTLP
// endpoint and, when it does, calls the builder that the program linked:
// package worker links the one from package tracing.
package envtrace

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

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

var (
	mu      sync.RWMutex
	builder Builder
)

// Link makes b the builder the worker entry uses. Linking again replaces it.
func Link(b Builder) {
	mu.Lock()
	defer mu.Unlock()
	builder = b
}

// Linked returns the builder Link set, or nil when the program linked none.
func Linked() Builder {
	mu.RLock()
	defer mu.RUnlock()
	return builder
}
