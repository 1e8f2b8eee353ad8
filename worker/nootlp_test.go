//go:build agora_nootlp

package worker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/otlptest"
	"github.com/agora-etl/agora/tracing"
	"github.com/agora-etl/agora/worker"
)

// TestWithoutOTLPAWorkerSaysItDoesNotTrace: built with -tags agora_nootlp,
// a worker runs untraced when an endpoint is set, and says so.
func TestWithoutOTLPAWorkerSaysItDoesNotTrace(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	t.Setenv(tracing.EnvEndpoint, rcv.URL())
	var stderr lockedBuffer
	if code := worker.RunMain(context.Background(), nil, &stderr, oncePool("p")); code != worker.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if n := rcv.Requests(); n != 0 {
		t.Errorf("%d export requests from a worker built without the exporter", n)
	}
	if !strings.Contains(stderr.String(), "built with -tags agora_nootlp") {
		t.Errorf("no warning says runs are not traced:\n%s", stderr.String())
	}
}
