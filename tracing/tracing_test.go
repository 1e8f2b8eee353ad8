package tracing_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/otlptest"
	"github.com/agora-etl/agora/tracing"
)

// noEndpoint clears the OTLP endpoint variables for the test.
func noEndpoint(t *testing.T) {
	t.Setenv(tracing.EnvEndpoint, "")
	t.Setenv(tracing.EnvTracesEndpoint, "")
}

func debugLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestUnknownExporterNamesTheAllowedOnes(t *testing.T) {
	tp, err := tracing.NewTracerProvider(context.Background(), tracing.Config{Exporter: "jaeger"}, nil)
	if tp != nil || !errors.Is(err, tracing.ErrUnknownExporter) {
		t.Fatalf("provider %v, error %v", tp, err)
	}
	for _, want := range []string{`"jaeger"`, `"otlp"`, `"stdout"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if err := (tracing.Config{Exporter: "otlp"}).Validate(); err != nil {
		t.Errorf("otlp: %v", err)
	}
}

func TestNoExporterAndNoEndpointMeansNoTracingAndOneInfoLine(t *testing.T) {
	noEndpoint(t)
	var logs bytes.Buffer
	tp, err := tracing.NewTracerProvider(context.Background(), tracing.Config{ServiceName: "orders-worker"}, debugLogger(&logs))
	if err != nil || tp != nil {
		t.Fatalf("provider %v, error %v; want neither", tp, err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "spans are not exported") ||
		!strings.Contains(lines[0], "service_name=orders-worker") {
		t.Fatalf("want exactly one INFO line saying spans go nowhere, got:\n%s", logs.String())
	}
}

func TestNoExporterWithAnEndpointExportsOverOTLP(t *testing.T) {
	for _, env := range []string{tracing.EnvEndpoint, tracing.EnvTracesEndpoint} {
		t.Run(env, func(t *testing.T) {
			noEndpoint(t)
			rcv := otlptest.NewReceiver(t)
			url := rcv.URL()
			if env == tracing.EnvTracesEndpoint {
				url += otlptest.TracesPath // this one is used as it is
			}
			t.Setenv(env, url)
			var logs bytes.Buffer
			tp, err := tracing.NewTracerProvider(context.Background(), tracing.Config{ServiceName: "svc"}, debugLogger(&logs))
			if err != nil || tp == nil {
				t.Fatalf("provider %v, error %v", tp, err)
			}
			if strings.Contains(logs.String(), "level=INFO") {
				t.Errorf("an INFO line although spans are exported:\n%s", logs.String())
			}
			_, span := tp.Tracer("t").Start(context.Background(), "work")
			span.End()
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := rcv.Spans()
			if len(spans) != 1 || spans[0].Name != "work" || spans[0].Resource["service.name"] != "svc" {
				t.Fatalf("received %+v", spans)
			}
		})
	}
}

func TestStdoutExporterOnlyWhenAskedFor(t *testing.T) {
	noEndpoint(t)
	var out bytes.Buffer
	defer tracing.SetStdout(&out)()

	tp, err := tracing.NewTracerProvider(context.Background(), tracing.Config{ServiceName: "svc"}, slog.New(slog.DiscardHandler))
	if err != nil || tp != nil {
		t.Fatalf("no exporter named: provider %v, error %v", tp, err)
	}

	tp, err = tracing.NewTracerProvider(context.Background(), tracing.Config{ServiceName: "svc", Exporter: "stdout"}, nil)
	if err != nil || tp == nil {
		t.Fatalf("provider %v, error %v", tp, err)
	}
	_, span := tp.Tracer("t").Start(context.Background(), "written")
	span.End()
	if out.Len() != 0 {
		t.Errorf("spans written before a flush: %s", out.String())
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, `"Name":"written"`) || !strings.Contains(got, `"Value":"svc"`) {
		t.Fatalf("stdout lacks the span or its service name:\n%s", got)
	}
}

func TestServiceNamePrecedence(t *testing.T) {
	t.Setenv(tracing.EnvServiceName, "")
	if got, want := tracing.ServiceName(""), filepath.Base(os.Args[0]); got != want {
		t.Errorf("default %q, want the program's name %q", got, want)
	}
	t.Setenv(tracing.EnvServiceName, "from-env")
	if got := tracing.ServiceName(""); got != "from-env" {
		t.Errorf("with %s: %q", tracing.EnvServiceName, got)
	}
	if got := tracing.ServiceName("configured"); got != "configured" {
		t.Errorf("configured name lost to the environment: %q", got)
	}
}

func TestEndpointConfigured(t *testing.T) {
	noEndpoint(t)
	if tracing.EndpointConfigured() {
		t.Fatal("empty variables count as set")
	}
	t.Setenv(tracing.EnvTracesEndpoint, "http://127.0.0.1:1/v1/traces")
	if !tracing.EndpointConfigured() {
		t.Fatal(tracing.EnvTracesEndpoint + " not seen")
	}
}

func TestSDKDisabledWins(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL())
	t.Setenv(tracing.EnvSDKDisabled, "true")
	for _, exporter := range []string{"", "otlp", "stdout"} {
		var logs bytes.Buffer
		tp, err := tracing.NewTracerProvider(context.Background(), tracing.Config{Exporter: exporter}, debugLogger(&logs))
		if err != nil || tp != nil {
			t.Fatalf("exporter %q: provider %v, error %v", exporter, tp, err)
		}
		if n := strings.Count(logs.String(), "level=INFO"); n != 1 || !strings.Contains(logs.String(), tracing.EnvSDKDisabled) {
			t.Errorf("exporter %q: want one INFO line naming %s:\n%s", exporter, tracing.EnvSDKDisabled, logs.String())
		}
	}
}
