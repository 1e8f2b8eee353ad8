package distributed

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// TestWorkerHelpListsTheEnvironment: a worker binary's -help lists the
// AGORA_DISTRIBUTED_* variables this package reads.
func TestWorkerHelpListsTheEnvironment(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runtime.RunMainTo(context.Background(), []string{"-h"}, &out, &errOut, nil)
	for _, want := range []string{"Environment (runtime/distributed)", envNames.RedisURL, envNames.RedlockRedisURLs, envNames.LeaseTTL, envNames.KeyPrefix} {
		if code != 0 || !strings.Contains(errOut.String(), want) {
			t.Fatalf("-h lacks %q (exit %d):\n%s", want, code, errOut.String())
		}
	}
}
