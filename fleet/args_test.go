package fleet_test

import (
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/agora-etl/agora/internal/redistest"
)

// TestFleetFlagsGoBeforeOrAfterTheCommand: --json and --redis may come
// before the command word, and --redis overrides the environment.
func TestFleetFlagsGoBeforeOrAfterTheCommand(t *testing.T) {
	srv := redistest.Start(t)
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 1, &runs, &mu)
	// The environment names a Redis where nothing listens: --redis wins.
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "redis://127.0.0.1:1/0")
	for _, args := range [][]string{
		{"--json", "--redis", srv.URL(), "pipelines"},
		{"--redis=" + srv.URL(), "pipelines", "--json"},
		{"pipelines", "--json", "--redis", srv.URL()},
	} {
		code, out, errOut := run(args...)
		var ps []map[string]any
		if err := json.Unmarshal([]byte(out), &ps); code != 0 || err != nil || len(ps) != 2 {
			t.Errorf("fleet %q: exit %d, %v\nstdout:\n%s\nstderr:\n%s", args, code, err, out, errOut)
		}
	}
	if code, out, errOut := run("--redis", srv.URL(), "workers"); code != 0 || !strings.Contains(out, "replica-a") {
		t.Errorf("fleet --redis URL workers: exit %d\n%s%s", code, out, errOut)
	}
}

func TestFleetWithoutCoordinatorSaysSoOnce(t *testing.T) {
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	code, _, errOut := run("--json", "workers")
	if code != 1 || strings.Contains(errOut, "fleet: fleet:") || !strings.Contains(errOut, "fleet: no coordinator configured:") ||
		!strings.Contains(errOut, "AGORA_DISTRIBUTED_REDIS_URL") || !strings.Contains(errOut, "--redis") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestFleetNeverShowsTheRedisPassword covers a --redis URL that cannot
// be reached and one that does not parse.
func TestFleetNeverShowsTheRedisPassword(t *testing.T) {
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, pw := range []string{`Pa'ss1`, `Pa"ss4`, `p@ss/w0rd`, `my pass word`} {
		for _, url := range []string{
			"redis://:" + pw + "@" + addr + "/0",
			"redis://u:" + pw + "@127.0.0.1:abc/0",
			"redis+sentinel://" + addr + "?master_name=m&password=" + pw,
			"redis://" + addr + "/0?db_password=" + pw,
		} {
			code, _, errOut := run("leases", "--redis", url)
			if code != 1 || strings.Contains(errOut, pw) || strings.Contains(errOut, strings.ReplaceAll(pw, `"`, `\"`)) {
				t.Errorf("--redis %q: exit %d, stderr %q", url, code, errOut)
			}
		}
	}
}
