//go:build !agora_nootlp

package worker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/otlptest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/tracing"
	"github.com/agora-etl/agora/worker"
)

// TestRunMainTracesOverOTLPFromTheEnvironment is a worker binary's path:
// no tracing code, an OTLP endpoint in the environment, and the run's span
// at a real OTLP/HTTP receiver by the time RunMain returns.
func TestRunMainTracesOverOTLPFromTheEnvironment(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL())
	t.Setenv(tracing.EnvTracesEndpoint, "")
	t.Setenv(tracing.EnvServiceName, "orders-worker")
	var stderr lockedBuffer
	if code := worker.RunMain(context.Background(), nil, &stderr, oncePool("orders")); code != worker.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].Name != runtime.RunSpanName || spans[0].Attributes["agora.pipeline.id"] != "orders" {
		t.Fatalf("received %+v, want the one run span of orders", spans)
	}
	if spans[0].Resource["service.name"] != "orders-worker" {
		t.Errorf("service.name %v, want orders-worker", spans[0].Resource["service.name"])
	}
	if !strings.Contains(stderr.String(), `msg="tracing runs over OTLP" service_name=orders-worker`) {
		t.Errorf("no log line says where spans go:\n%s", stderr.String())
	}
}
