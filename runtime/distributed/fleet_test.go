package distributed

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// TestWorkerBinaryHasTheFleetSubcommand runs "fleet workers" through a
// worker's RunMainTo, as "./worker fleet workers" would, against a real
// redis-server with one registered worker.
func TestWorkerBinaryHasTheFleetSubcommand(t *testing.T) {
	r := newReal(t)
	r.started(r.options(5*time.Second), "replica-x")
	t.Setenv(envNames.RedisURL, r.srv.URL())
	var out, errOut bytes.Buffer
	code := runtime.RunMainTo(context.Background(), []string{"fleet", "workers", "--json"}, &out, &errOut, nil)
	if code != 0 || !strings.Contains(out.String(), `"id": "replica-x"`) {
		t.Fatalf("fleet workers: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}

	out.Reset()
	errOut.Reset()
	code = runtime.RunMainTo(context.Background(), []string{"-h"}, &out, &errOut, nil)
	for _, want := range []string{"fleet", "inspect and steer the fleet", envNames.RedisURL, envNames.RedlockRedisURLs, envNames.LeaseTTL} {
		if code != 0 || !strings.Contains(errOut.String(), want) {
			t.Fatalf("-h lacks %q (exit %d):\n%s", want, code, errOut.String())
		}
	}
}
