package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// TestAgoraFleetCommands runs "agora fleet" as a user would, against a real
// redis-server with one registered worker.
func TestAgoraFleetCommands(t *testing.T) {
	srv := redistest.Start(t)
	coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: srv.URL(), LeaseTTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Close() })
	if err := coord.Start(context.Background(), "replica-1", []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	env := []string{"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL()}
	code, out, errOut := runAgora(t, t.TempDir(), env, "fleet", "workers")
	if code != 0 || !strings.HasPrefix(out, "WORKER ") || !strings.Contains(out, "replica-1") {
		t.Fatalf("agora fleet workers: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = runAgora(t, t.TempDir(), env, "fleet", "pause", "orders", "--json"); code != 0 || !strings.Contains(out, `"action": "pause"`) {
		t.Fatalf("agora fleet pause: exit %d\n%s", code, out)
	}
	if code, _, errOut = runAgora(t, t.TempDir(), env, "fleet", "trigger", "nope"); code != 1 || !strings.Contains(errOut, `unknown pipeline "nope"`) {
		t.Fatalf("agora fleet trigger nope: exit %d\n%s", code, errOut)
	}
	if code, _, errOut = runAgora(t, t.TempDir(), env, "fleet"); code != 2 || !strings.Contains(errOut, "usage: fleet") {
		t.Fatalf("agora fleet: exit %d\n%s", code, errOut)
	}
	if code, out, _ = runAgora(t, t.TempDir(), env, "help", "fleet"); code != 0 || !strings.Contains(out, "trigger ID") {
		t.Fatalf("agora help fleet: exit %d\n%s", code, out)
	}
}
