package fleet_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/worker"
)

// TestWorkerBinaryHasTheFleetSubcommand runs "fleet workers" through the
// worker entry, as "./worker fleet workers" would, against a real
// redis-server with one registered worker.
func TestWorkerBinaryHasTheFleetSubcommand(t *testing.T) {
	srv := redistest.Start(t)
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 1, &runs, &mu)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var out, errOut bytes.Buffer
	code := worker.RunMainTo(context.Background(), []string{"fleet", "workers", "--json"}, &out, &errOut, nil)
	if code != 0 || !strings.Contains(out.String(), `"id": "replica-a"`) {
		t.Fatalf("fleet workers: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}

	out.Reset()
	errOut.Reset()
	code = worker.RunMainTo(context.Background(), []string{"-h"}, &out, &errOut, nil)
	for _, want := range []string{"fleet", fleet.Summary, "AGORA_DISTRIBUTED_REDIS_URL"} {
		if code != 0 || !strings.Contains(errOut.String(), want) {
			t.Fatalf("-h lacks %q (exit %d):\n%s", want, code, errOut.String())
		}
	}
}
