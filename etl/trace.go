package etl

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the pipeline's spans.
const tracerName = "github.com/agora-etl/agora/etl"

// The names of the child spans of a run's span.
const (
	spanSourceRead = "agora.source.read"
	spanSinkWrite  = "agora.sink.write"
)

// The attributes of the child spans.
const (
	attrKind     = attribute.Key("agora.component.kind")
	attrType     = attribute.Key("agora.component.type")
	attrName     = attribute.Key("agora.component.name")
	attrRecords  = attribute.Key("agora.records")
	attrRejected = attribute.Key("agora.records.rejected")
	attrMax      = attribute.Key("agora.batch.max")
)

// runTracer returns the tracer of the run's span: a no-op one unless the
// runtime started a recording span.
func runTracer(ctx context.Context) trace.Tracer {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(tracerName)
}

// endSpan records err on span, when there is one, and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
