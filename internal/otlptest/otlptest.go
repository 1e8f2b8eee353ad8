// Package otlptest is an OTLP/HTTP trace receiver for tests: an HTTP server
// on 127.0.0.1 that decodes the protobuf export requests an OTLP/HTTP
// exporter sends (gzipped or not) and keeps their spans. JSON requests are
// refused: their hex ids do not survive protojson's base64 bytes.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// TracesPath is where OTLP/HTTP exporters post spans.
const TracesPath = "/v1/traces"

// Span is one received span, flattened for assertions.
type Span struct {
	Name         string
	TraceID      string // hex
	SpanID       string // hex
	ParentSpanID string // hex; "" for a root span
	// Attributes holds string, int64, float64 and bool values.
	Attributes map[string]any
	// Resource holds the attributes of the resource that sent the span.
	Resource map[string]any
	// StatusCode is "Unset", "Ok" or "Error"; StatusMessage its description.
	StatusCode    string
	StatusMessage string
	// Events names the span's events ("exception" for a recorded error).
	Events []string
}

// Receiver is a running OTLP/HTTP receiver; it is closed when the test
// ends.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	errs     []error
}

// NewReceiver starts a receiver on a free 127.0.0.1 port.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.srv.Close()
		for _, err := range r.Errors() {
			t.Errorf("otlptest: bad export request: %v", err)
		}
	})
	return r
}

// URL is the receiver's base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) URL() string { return r.srv.URL }

// Spans returns the spans received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests counts the export requests received.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Errors returns the problems with requests that could not be decoded.
func (r *Receiver) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

func (r *Receiver) fail(w http.ResponseWriter, code int, err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	http.Error(w, err.Error(), code)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != TracesPath {
		r.fail(w, http.StatusNotFound, fmt.Errorf("%s %s: want POST %s", req.Method, req.URL.Path, TracesPath))
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			r.fail(w, http.StatusBadRequest, fmt.Errorf("gzip: %w", err))
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		r.fail(w, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err))
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		r.fail(w, http.StatusUnsupportedMediaType, fmt.Errorf("content type %q: want application/x-protobuf", ct))
		return
	}
	var export collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &export); err != nil {
		r.fail(w, http.StatusBadRequest, fmt.Errorf("decoding the protobuf: %w", err))
		return
	}
	r.keep(&export)

	out, err := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	if err != nil {
		r.fail(w, http.StatusInternalServerError, err)
		return
	}
	_, _ = io.Copy(w, bytes.NewReader(out))
}

func (r *Receiver) keep(export *collectorpb.ExportTraceServiceRequest) {
	var spans []Span
	for _, rs := range export.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Name:          s.GetName(),
					TraceID:       hex.EncodeToString(s.GetTraceId()),
					SpanID:        hex.EncodeToString(s.GetSpanId()),
					ParentSpanID:  hex.EncodeToString(s.GetParentSpanId()),
					Attributes:    attrMap(s.GetAttributes()),
					Resource:      res,
					StatusCode:    statusName(s.GetStatus().GetCode().String()),
					StatusMessage: s.GetStatus().GetMessage(),
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, e.GetName())
				}
				spans = append(spans, sp)
			}
		}
	}
	r.mu.Lock()
	r.requests++
	r.spans = append(r.spans, spans...)
	r.mu.Unlock()
}

// statusName turns "STATUS_CODE_ERROR" into "Error".
func statusName(code string) string {
	switch code {
	case "STATUS_CODE_OK":
		return "Ok"
	case "STATUS_CODE_ERROR":
		return "Error"
	default:
		return "Unset"
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = x.IntValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = x.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = x.BoolValue
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}
