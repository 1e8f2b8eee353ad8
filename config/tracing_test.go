package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTracingTable(t *testing.T) {
	var tr Tracing
	ds := check(t, "[t]\nenabled = true\nservice_name = \"svc\"\nexporter = \"otlp\"\n", func(d *decoder, m map[string]any) {
		tr = d.tracing(m["t"].(map[string]any), path{"t"})
	})
	if len(ds) > 0 || tr != (Tracing{Enabled: true, Backend: "opentelemetry", ServiceName: "svc", Exporter: ExporterOTLP}) {
		t.Errorf("tracing = %+v, %v", tr, ds)
	}
	ds = check(t, "[t]\nenabled = \"yes\"\nbackend = \"zipkin\"\nexporter = \"console\"\nsampler = 1\n", func(d *decoder, m map[string]any) {
		tr = d.tracing(m["t"].(map[string]any), path{"t"})
	})
	want := []string{
		`t.toml:2:11: t.enabled: want a boolean, got a string`,
		`t.toml:3:11: t.backend: unknown backend "zipkin": the supported backend is "opentelemetry"`,
		`t.toml:4:12: t.exporter: unknown exporter "console"; known exporters: otlp, stdout`,
		`t.toml:5:1: t: unknown key "sampler"; known keys: backend, enabled, exporter, service_name`,
	}
	if got := ds.Error(); got != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

func TestTracingServiceName(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) { return v, k == "OTEL_SERVICE_NAME" && v != "" }
	}
	if got := (Tracing{ServiceName: "own"}).service(env("otel")); got != "own" {
		t.Errorf("service = %q, want own", got)
	}
	if got := (Tracing{}).service(env("otel")); got != "otel" {
		t.Errorf("service = %q, want OTEL_SERVICE_NAME's otel", got)
	}
	if got, want := (Tracing{}).service(env("")), filepath.Base(os.Args[0]); got != want {
		t.Errorf("service = %q, want the program's name %q", got, want)
	}
}
