// Package tracing builds the OpenTelemetry tracer providers agora workers
// export their spans with.
//
// A worker pool (package runtime) traces every run when it is given a
// trace.TracerProvider; this package turns the few settings a worker has —
// a service name and an exporter name — into an SDK provider, with the
// standard OTEL_* environment variables doing the rest.
//
// It links the OTLP exporter, and with it gRPC and protobuf. Runtime does
// not import it, so the packages holding pipelines stay light; package
// worker, the entry of worker binaries, links FromEnv into the entry.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agora-etl/agora/internal/envtrace"
)

// Exporter names accepted in Config.Exporter.
const (
	// ExporterOTLP sends spans over OTLP/HTTP, configured by the standard
	// OTEL_EXPORTER_OTLP_* variables (endpoint, headers, timeout,
	// compression, certificates, protocol).
	ExporterOTLP = "otlp"
	// ExporterStdout writes spans as JSON to standard output. Only when
	// asked for: a worker's stdout may be one of its sinks.
	ExporterStdout = "stdout"
)

// Standard OpenTelemetry environment variables this package reads itself;
// the OTLP exporter reads the rest of OTEL_EXPORTER_OTLP_*.
const (
	// EnvEndpoint is the OTLP base URL ("/v1/traces" is appended).
	EnvEndpoint = envtrace.EnvEndpoint
	// EnvTracesEndpoint is the OTLP URL for traces, used as it is.
	EnvTracesEndpoint = envtrace.EnvTracesEndpoint
	// EnvServiceName names the service when Config.ServiceName is empty.
	EnvServiceName = envtrace.EnvServiceName
	// EnvSDKDisabled set to "true" turns tracing off whatever the Config.
	EnvSDKDisabled = envtrace.EnvSDKDisabled
)

// ErrUnknownExporter is wrapped by the error of a Config naming an exporter
// other than "otlp" or "stdout".
var ErrUnknownExporter = errors.New("tracing: unknown exporter")

// Config says where a worker's spans go.
type Config struct {
	// ServiceName is the resource's service.name. Empty means
	// OTEL_SERVICE_NAME, or else the program's file name.
	ServiceName string
	// Exporter is "otlp", "stdout" or "": OTLP when EnvEndpoint or
	// EnvTracesEndpoint is set, otherwise no tracing at all.
	Exporter string
}

// stdout is where the stdout exporter writes; tests point it elsewhere.
var stdout io.Writer = os.Stdout

// EndpointConfigured reports whether an OTLP endpoint is set in the
// environment (EnvEndpoint or EnvTracesEndpoint, non-empty).
func EndpointConfigured() bool { return envtrace.EndpointConfigured() }

// Disabled reports whether EnvSDKDisabled turns tracing off.
func Disabled() bool { return envtrace.Disabled() }

// Validate checks cfg without building anything.
func (cfg Config) Validate() error {
	switch cfg.Exporter {
	case "", ExporterOTLP, ExporterStdout:
		return nil
	}
	return fmt.Errorf("%w %q: want %q or %q (or none: OTLP when %s or %s is set)",
		ErrUnknownExporter, cfg.Exporter, ExporterOTLP, ExporterStdout, EnvEndpoint, EnvTracesEndpoint)
}

// NewTracerProvider returns a provider that batches spans to the exporter
// cfg names, with service.name set. With no exporter named and no OTLP
// endpoint in the environment it returns a nil provider and a nil error,
// after one INFO line on logger (nil: slog.Default()) saying spans go
// nowhere; likewise, whatever cfg says, when OTEL_SDK_DISABLED is "true".
// The caller owns the provider: Shutdown flushes and stops it.
func NewTracerProvider(ctx context.Context, cfg Config, logger *slog.Logger) (*sdktrace.TracerProvider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	service := ServiceName(cfg.ServiceName)
	if Disabled() {
		logger.Info("tracing: "+EnvSDKDisabled+"=true; spans are not exported", slog.String("service_name", service))
		return nil, nil
	}
	exporter := cfg.Exporter
	if exporter == "" {
		if !EndpointConfigured() {
			logger.Info("tracing: no exporter configured and no OTLP endpoint in the environment; spans are not exported",
				slog.String("service_name", service),
				slog.String("hint", "set "+EnvEndpoint+" or exporter = \"otlp\" | \"stdout\""))
			return nil, nil
		}
		exporter = ExporterOTLP
	}

	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch exporter {
	case ExporterStdout:
		exp, err = stdouttrace.New(stdouttrace.WithWriter(stdout))
	default:
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: %s exporter: %w", exporter, err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	logger.Debug("tracing: exporting spans", slog.String("exporter", exporter), slog.String("service_name", service))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// ServiceName returns name, or when it is empty OTEL_SERVICE_NAME, or else
// the program's file name: the service.name NewTracerProvider uses.
func ServiceName(name string) string { return envtrace.ServiceName(name) }

// FromEnv builds the provider of a worker traced from the environment: OTLP
// as the OTEL_* variables say, or none (nil, nil) when they name no endpoint
// or disable the SDK. It is what package worker's entry traces a pool with
// when the pool's code gave it no provider.
func FromEnv(ctx context.Context, logger *slog.Logger) (envtrace.Provider, error) {
	if !EndpointConfigured() {
		return nil, nil
	}
	tp, err := NewTracerProvider(ctx, Config{Exporter: ExporterOTLP}, logger)
	if err != nil || tp == nil {
		// A nil *TracerProvider would hide in a non-nil Provider.
		return nil, err
	}
	return tp, nil
}
