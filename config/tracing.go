package config

import (
	"os"
	"path/filepath"
	"slices"
)

// The tracing exporters of tracing.exporter.
const (
	// ExporterAuto (exporter not set) sends spans over OTLP when an
	// OTEL_EXPORTER_OTLP_*ENDPOINT variable is set, and nowhere otherwise.
	ExporterAuto = ""
	// ExporterOTLP sends spans over OTLP/HTTP, configured by the standard
	// OTEL_EXPORTER_OTLP_* variables.
	ExporterOTLP = "otlp"
	// ExporterStdout writes spans to stdout; only when asked for, since
	// stdout may be a sink.
	ExporterStdout = "stdout"
)

// Tracing is a [pipelines.<id>.tracing] table.
type Tracing struct {
	// Enabled turns tracing on for the pipeline (default false).
	Enabled bool
	// Backend is "opentelemetry", the only one.
	Backend string
	// ServiceName is the service.name of the spans; "" means
	// OTEL_SERVICE_NAME, else the program's file name (as for a
	// generated worker).
	ServiceName string
	// Exporter is ExporterAuto, ExporterOTLP or ExporterStdout.
	Exporter string
}

var (
	tracingKeys = []string{"enabled", "backend", "service_name", "exporter"}
	backends    = []string{"opentelemetry"}
	exporters   = []string{ExporterOTLP, ExporterStdout}
)

func (d *decoder) tracing(m map[string]any, at path) Tracing {
	d.knownKeys(m, at, tracingKeys)
	t := Tracing{Backend: "opentelemetry"}
	if b, ok := d.boolean(m, at, "enabled"); ok {
		t.Enabled = b
	}
	if b, ok := d.str(m, at, "backend"); ok {
		if !slices.Contains(backends, b) {
			d.atValue(at.child("backend"), "%s: unknown backend %s: the supported backend is \"opentelemetry\"", at.child("backend"), d.quoted(at.child("backend"), b))
		}
		t.Backend = b
	}
	if s, ok := d.str(m, at, "service_name"); ok {
		if s == "" {
			d.atValue(at.child("service_name"), "%s: must not be empty (leave it out for OTEL_SERVICE_NAME, else the program's name)", at.child("service_name"))
		}
		t.ServiceName = s
	}
	if e, ok := d.str(m, at, "exporter"); ok {
		if !slices.Contains(exporters, e) {
			d.atValue(at.child("exporter"), "%s: unknown exporter %s%s", at.child("exporter"), d.quoted(at.child("exporter"), e), hint(e, exporters, "exporters"))
		}
		t.Exporter = e
	}
	return t
}

// service returns the service name the spans carry.
func (t Tracing) service(lookupEnv func(string) (string, bool)) string {
	if t.ServiceName != "" {
		return t.ServiceName
	}
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if v, ok := lookupEnv("OTEL_SERVICE_NAME"); ok && v != "" {
		return v
	}
	return filepath.Base(os.Args[0])
}
