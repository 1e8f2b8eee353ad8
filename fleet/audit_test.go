package fleet_test

import (
	"encoding/json"
	"os"
	"os/user"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// me is the actor the fleet CLI records: user@host.
func me(t *testing.T) string {
	t.Helper()
	host, _ := os.Hostname()
	u, err := user.Current()
	if err != nil {
		t.Skipf("no current user: %v", err)
	}
	return u.Username + "@" + host
}

func TestFleetPauseWithReasonIsInTheAuditLog(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 1, &runs, &mu)

	if code, out, errOut := run("pause", "orders", "--reason", "maintenance"); code != 0 || !strings.Contains(out, "paused orders") {
		t.Fatalf("pause --reason: %d %s %s", code, out, errOut)
	}
	code, out, errOut := run("audit", "--json")
	var entries []distributed.AuditEntry
	if err := json.Unmarshal([]byte(out), &entries); code != 0 || err != nil || len(entries) != 1 {
		t.Fatalf("audit --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if e := entries[0]; e.PipelineID != "orders" || e.Action != distributed.AuditPause || e.Actor != me(t) || e.Reason != "maintenance" ||
		!strings.Contains(e.From, "/") || time.Since(e.At) > time.Minute || !e.Until.IsZero() {
		t.Fatalf("audit entry = %+v, want the pause by %s for maintenance", e, me(t))
	}
	for _, field := range []string{`"actor": "` + me(t) + `"`, `"reason": "maintenance"`, `"action": "pause"`, `"pipeline": "orders"`} {
		if !strings.Contains(out, field) {
			t.Errorf("audit --json lacks %s:\n%s", field, out)
		}
	}
	code, out, _ = run("pipelines")
	if code != 0 || !strings.Contains(out, "\npaused orders by "+me(t)+": maintenance\n") {
		t.Fatalf("pipelines after pause --reason:\n%s", out)
	}

	if code, out, errOut := run("resume", "orders", "--reason", "done"); code != 0 {
		t.Fatalf("resume: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := run("trigger", "orders"); code != 0 {
		t.Fatalf("trigger: %d %s %s", code, out, errOut)
	}
	code, out, _ = run("audit", "orders")
	rows := aligned(t, out)
	if code != 0 || !strings.HasPrefix(out, "AT ") || len(rows) != 3 {
		t.Fatalf("audit orders table:\n%s", out)
	}
	actions := map[string]string{}
	for _, r := range rows {
		if r[1] != "orders" || r[3] != me(t) {
			t.Errorf("audit row %q", r)
		}
		actions[r[2]] = r[4]
	}
	if actions["pause"] != "maintenance" || actions["resume"] != "done" || actions["trigger"] != "-" {
		t.Errorf("audit table actions and reasons = %v\n%s", actions, out)
	}
	if code, out, _ = run("audit", "events", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("audit events --json: %d %s", code, out)
	}
	if code, out, _ = run("audit", "--limit", "1", "--json"); code != 0 || strings.Count(out, `"action"`) != 1 {
		t.Errorf("audit --limit 1: %d %s", code, out)
	}
}

func TestFleetPauseUntilResumesByItself(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 1, &runs, &mu)

	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	if code, _, errOut := run("pause", "orders", "--until", past); code != 1 || !strings.Contains(errOut, "has passed") {
		t.Fatalf("pause --until the past: %d %s", code, errOut)
	}
	if code, out, errOut := run("pause", "orders", "--reason", "window", "--until", "2s"); code != 0 || !strings.Contains(out, "resumes by itself at") {
		t.Fatalf("pause --until 2s: %d %s %s", code, out, errOut)
	}
	var ps []distributed.PipelineInfo
	code, out, _ := run("pipelines", "--json")
	if err := json.Unmarshal([]byte(out), &ps); code != 0 || err != nil || len(ps) != 2 || !ps[1].Paused || ps[1].PausedUntil == nil || ps[1].PausedReason != "window" {
		t.Fatalf("pipelines --json while paused: %d %v %s", code, err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, out, _ = run("pipelines", "--json")
		ps = ps[:0]
		if err := json.Unmarshal([]byte(out), &ps); code != 0 || err != nil {
			t.Fatalf("pipelines --json: %d %v %s", code, err, out)
		}
		if !ps[1].Paused {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still paused 10 s after a 2 s pause:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The resume at the until is recorded once, by whoever read it first.
	deadline = time.Now().Add(5 * time.Second)
	for {
		var entries []distributed.AuditEntry
		_, out, _ = run("audit", "orders", "--json")
		if err := json.Unmarshal([]byte(out), &entries); err != nil {
			t.Fatal(err)
		}
		if len(entries) == 2 && entries[0].Action == distributed.AuditResume && entries[1].Action == distributed.AuditPause &&
			entries[0].Actor == me(t) && !entries[0].Until.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit after the until:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, args := range [][]string{{"pause", "orders", "--until", "soon"}, {"pause", "orders", "--until", "-1h"},
		{"resume", "orders", "--until", "1h"}, {"workers", "--reason", "x"}, {"audit", "a", "b"}, {"audit", "--limit", "-1"}} {
		if code, _, errOut := run(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %s", args, code, errOut)
		}
	}
}
