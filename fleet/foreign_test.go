package fleet_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/syncbuf"
)

// TestFleetCommandsSurviveForeignKeys is the repro of keys agora did not
// write under its prefix: a string at a worker key, then a string at the
// pause key. Every command still answers, warning once per command with
// the key's name; pause and resume fail clearly, naming the key.
func TestFleetCommandsSurviveForeignKeys(t *testing.T) {
	admin := oneReplica(t)
	var logs syncbuf.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	const workerKey = "agora:distributed:worker:stringkey"
	if err := admin.Set(context.Background(), workerKey, "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"workers"}, {"leases"}, {"pipelines"}, {"runs"}, {"pause", "orders"}, {"resume", "orders"}, {"trigger", "orders"}} {
		from := len(logs.String())
		code, out, errOut := run(args...)
		if code != 0 {
			t.Errorf("%v with a foreign worker key: exit %d\n%s%s", args, code, out, errOut)
		}
		// Resume reads no worker record; every other command does.
		if n := strings.Count(logs.String()[from:], "key="+workerKey); n != 1 && (n != 0 || args[0] != "resume") {
			t.Errorf("%v: %d warnings naming %s, want one:\n%s", args, n, workerKey, logs.String()[from:])
		}
	}

	// A token the acquire script cannot use: the pipelines table says so.
	const tokenKey = "agora:distributed:token:{orders}"
	if err := admin.Set(context.Background(), tokenKey, "99999999999999999999999 5", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run("pipelines"); code != 0 || !strings.Contains(out, "problem: orders: "+tokenKey) {
		t.Errorf("pipelines with a malformed token: exit %d\n%s%s", code, out, errOut)
	}

	const pausedKey = "agora:distributed:control:paused"
	if err := admin.Set(context.Background(), pausedKey, "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	from := len(logs.String())
	if code, out, errOut := run("pipelines"); code != 0 || !strings.Contains(out, "orders") {
		t.Errorf("pipelines with a foreign pause key: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(logs.String()[from:], "key="+pausedKey) {
		t.Errorf("no warning naming %s:\n%s", pausedKey, logs.String())
	}
	for _, args := range [][]string{{"pause", "orders"}, {"resume", "orders"}} {
		code, _, errOut := run(args...)
		if code != 1 || !strings.Contains(errOut, pausedKey) || !strings.Contains(errOut, "did not write") {
			t.Errorf("%v with a foreign pause key: exit %d, %s; want 1 naming the key", args, code, errOut)
		}
	}
}
