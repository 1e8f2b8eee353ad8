package otlptest_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agora-etl/agora/internal/otlptest"
)

func TestReceiverDecodesWhatTheExporterSends(t *testing.T) {
	for name, opts := range map[string][]otlptracehttp.Option{
		"protobuf":      nil,
		"protobuf gzip": {otlptracehttp.WithCompression(otlptracehttp.GzipCompression)},
	} {
		t.Run(name, func(t *testing.T) {
			rcv := otlptest.NewReceiver(t)
			exp, err := otlptracehttp.New(context.Background(), append([]otlptracehttp.Option{otlptracehttp.WithEndpointURL(rcv.URL() + otlptest.TracesPath)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
				sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "svc"))))
			ctx, parent := tp.Tracer("t").Start(context.Background(), "parent")
			_, child := tp.Tracer("t").Start(ctx, "child")
			child.SetAttributes(attribute.Int64("n", 7), attribute.Bool("b", true), attribute.String("s", "x"))
			child.SetStatus(codes.Error, "boom")
			child.End()
			parent.End()
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := rcv.Spans()
			if len(spans) != 2 || rcv.Requests() != 2 {
				t.Fatalf("got %d spans in %d requests, want 2 in 2: %+v", len(spans), rcv.Requests(), spans)
			}
			c, p := spans[0], spans[1]
			if c.Name != "child" || p.Name != "parent" {
				t.Fatalf("names %q, %q", c.Name, p.Name)
			}
			if c.ParentSpanID != p.SpanID || c.TraceID != p.TraceID || p.ParentSpanID != "" {
				t.Errorf("nesting: child %+v, parent %+v", c, p)
			}
			if c.Attributes["n"] != int64(7) || c.Attributes["b"] != true || c.Attributes["s"] != "x" {
				t.Errorf("attributes %v", c.Attributes)
			}
			if c.StatusCode != "Error" || c.StatusMessage != "boom" || p.StatusCode != "Unset" {
				t.Errorf("status %s %q / %s", c.StatusCode, c.StatusMessage, p.StatusCode)
			}
			if c.Resource["service.name"] != "svc" {
				t.Errorf("resource %v", c.Resource)
			}
		})
	}
}
