package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDemoRunsAFleet runs what make run runs, for 12 seconds: three replicas
// of the example worker against one Redis. Every slot must run exactly
// once, the once pipeline exactly once in the fleet, and every replica must
// exit cleanly.
func TestDemoRunsAFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for 12 seconds")
	}
	args := []string{"-duration", "12s"}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed")
		}
		args = append(args, "-miniredis")
	}
	bin := filepath.Join(t.TempDir(), "etl-worker")
	if err := buildWorker(context.Background(), bin); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(append(args, "-worker", bin), &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	runLine := regexp.MustCompile(`(?m)^(\S+)\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ|\(numbered by token\))\s+(replica-\d)\s+(\d+)$`)
	counts := map[string]int{}
	replicas := map[string]bool{}
	for _, m := range runLine.FindAllStringSubmatch(out, -1) {
		counts[m[1]]++
		replicas[m[3]] = true
		if m[4] == "0" {
			t.Errorf("run without a fencing token: %s", m[0])
		}
	}
	if counts["schema-migrate"] != 1 {
		t.Errorf("schema-migrate ran %d times, want once in the fleet", counts["schema-migrate"])
	}
	if counts["inventory-sync"] < 1 || counts["events-consumer"] < 1 {
		t.Errorf("runs per pipeline: %v", counts)
	}
	if !regexp.MustCompile(`stale writer: replica-\d loads \w+ again with its old token \d+.*\n  refused: token \d+ < stored token \d+`).MatchString(out) {
		t.Errorf("the stale writer was not shown refused:\n%s", out)
	}
	if strings.Contains(out, "more than once") || !strings.Contains(out, "summary:") {
		t.Errorf("summary:\n%s", out)
	}
	t.Logf("%d replicas ran something; runs: %v", len(replicas), counts)
}
