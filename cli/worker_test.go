package cli_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/modtest"
)

// exampleFile is the agora/v1 file the documentation promises runs
// unchanged.
func exampleFile(t *testing.T) string {
	t.Helper()
	return filepath.Join(modtest.RepoRoot(t), "examples", "config-only", "pipelines.toml")
}

func TestWorkerRunsTheExampleFileUnchanged(t *testing.T) {
	p := startAgora(t, t.TempDir(), []string{"AGORA_DISTRIBUTED_REDIS_URL="},
		"worker", "--config", exampleFile(t), "-health-port", "0")

	// The every-15-minutes pipeline runs at start and prints its record.
	p.waitOutput(t, p.stdout, `{"id":1}`, 30*time.Second)
	if got := lines(p.stdout.String()); len(got) != 1 || got[0] != `{"id":1}` {
		t.Fatalf("stdout = %q, want exactly one line {\"id\":1}", got)
	}

	addr := p.healthAddr(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s = %d, want 200", path, resp.StatusCode)
		}
	}
	var status struct {
		Pipelines []struct {
			PipelineID string `json:"pipeline_id"`
			Schedule   string `json:"schedule"`
			Runs       int    `json:"runs"`
			Records    struct {
				In, Out int64
			} `json:"records"`
		} `json:"pipelines"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/status")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&status)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(status.Pipelines) == 1 && status.Pipelines[0].Runs == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(status.Pipelines) != 1 {
		t.Fatalf("status pipelines = %+v, want one", status.Pipelines)
	}
	got := status.Pipelines[0]
	if got.PipelineID != "orders" || got.Schedule != "every=15m0s" || got.Runs != 1 || got.Records.In != 1 || got.Records.Out != 1 {
		t.Fatalf("status = %+v, want orders every 15m, 1 run, 1 record in and out", got)
	}

	p.signal(t, syscall.SIGINT)
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code after SIGINT = %d, want 0\nstderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "worker pool stopped") {
		t.Fatalf("no clean stop in the log:\n%s", p.stderr)
	}
}

func TestWorkerUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, 2, "usage: agora COMMAND"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"worker"}, 2, "missing --config FILE or --module PKG"},
		{[]string{"worker", "--config"}, 2, "flag --config needs a value"},
		{[]string{"worker", "--config", "a.toml", "--module", "./x"}, 2, "not both"},
		{[]string{"check"}, 2, "missing FILE"},
		{[]string{"check", "a.toml", "b.toml"}, 2, "one file at a time"},
		{[]string{"worker", "--config", filepath.Join(dir, "missing.toml")}, 1, "missing.toml"},
	}
	for _, tt := range tests {
		code, _, stderr := runAgora(t, dir, nil, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("agora %q: exit %d, stderr:\n%s\nwant exit %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := runAgora(t, dir, nil, "help")
	if code != 0 || !strings.Contains(stdout, "worker") || !strings.Contains(stdout, "check") {
		t.Fatalf("agora help: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runAgora(t, dir, nil, "version")
	if code != 0 || !strings.HasPrefix(stdout, "agora ") {
		t.Fatalf("agora version: exit %d, %q", code, stdout)
	}
	code, _, stderr := runAgora(t, dir, nil, "worker", "-h")
	if code != 0 || !strings.Contains(stderr, "--config FILE") || !strings.Contains(stderr, "-health-port") {
		t.Fatalf("agora worker -h: exit %d\n%s", code, stderr)
	}
}

func writeConfig(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
