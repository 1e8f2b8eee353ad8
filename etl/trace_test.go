package etl_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agora-etl/agora/etl"
)

func TestPipelineSpansAreChildrenOfTheRunSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, run := tp.Tracer("test").Start(context.Background(), "agora.run")

	src := etl.NewIterableSource([]etl.Record{{"id": 0}, {"id": 1}, {"id": 2}})
	good := &memSink{name: "good"}
	broken := &memSink{name: "broken", fail: errDown}
	err := etl.New(src, []etl.Sink{good, broken}, etl.WithBatchSize(2)).Run(ctx)
	run.End()
	if !errors.Is(err, errDown) {
		t.Fatalf("err = %v", err)
	}

	type seen struct {
		name, comp, typ string
		records         int64
		failed          bool
	}
	var got []seen
	for _, s := range rec.Ended() {
		if s.Name() == "agora.run" {
			continue
		}
		if s.Parent().SpanID() != run.SpanContext().SpanID() {
			t.Fatalf("span %s is not a child of the run span", s.Name())
		}
		attrs := map[attribute.Key]attribute.Value{}
		for _, a := range s.Attributes() {
			attrs[a.Key] = a.Value
		}
		if s.InstrumentationScope().Name != "github.com/agora-etl/agora/etl" {
			t.Fatalf("scope %q", s.InstrumentationScope().Name)
		}
		got = append(got, seen{s.Name(), attrs["agora.component.name"].AsString(), attrs["agora.component.type"].AsString(),
			attrs["agora.records"].AsInt64(), s.Status().Code == codes.Error})
	}
	want := []seen{
		{"agora.source.read", "iterable", "iterable", 2, false},
		{"agora.sink.write", "good", "*etl_test.memSink", 2, false},
		{"agora.sink.write", "broken", "*etl_test.memSink", 2, true},
	}
	if len(got) != len(want) {
		t.Fatalf("spans %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("span %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, s := range rec.Ended() {
		if s.Status().Code == codes.Error && len(s.Events()) == 0 {
			t.Fatal("the failed write's error is not recorded as an event")
		}
	}
}
