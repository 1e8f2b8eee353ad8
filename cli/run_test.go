package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/redistest"
)

const twoPipelines = `format = "agora/v1"

[pipelines.first.source]
type = "iterable"
records = [{n = 1}, {n = 2}]

[pipelines.first.schedule]
mode = "cron"
expr = "0 3 * * *"

[[pipelines.first.sinks]]
type = "file"
path = "first.jsonl"

[pipelines.second.source]
type = "iterable"
records = [{n = 3}]

[pipelines.second.schedule]
mode = "once"

[[pipelines.second.sinks]]
type = "file"
path = "second.jsonl"
`

func TestRunRunsEveryPipelineOnceNow(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", twoPipelines)
	code, _, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "run", "--config", path)
	if code != 0 {
		t.Fatalf("agora run: exit %d\n%s", code, stderr)
	}
	for name, want := range map[string]string{"first.jsonl": "{\"n\":1}\n{\"n\":2}\n", "second.jsonl": "{\"n\":3}\n"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestRunNamedPipelineOnly(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", twoPipelines)
	code, _, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "run", "--config", path, "--pipeline", "second")
	if code != 0 {
		t.Fatalf("agora run --pipeline second: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "first.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("first ran although only second was named (stat: %v)", err)
	}
	code, _, stderr = runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "run", "--config", path, "--pipeline", "nope")
	if code != 1 || !strings.Contains(stderr, "nope") {
		t.Fatalf("agora run --pipeline nope: exit %d, want 1 naming it\n%s", code, stderr)
	}
}

// Rule: agora run logs in one format, the worker's: the coordinator's own
// lines (which go through slog's default logger) come out in the same
// handler as the pool's, not in the log package's format.
func TestRunLogsInOneFormat(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", twoPipelines)
	for _, format := range []string{"text", "json"} {
		code, _, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL()}, "run", "--config", path, "--log-format", format)
		if code != 0 {
			t.Fatalf("agora run --log-format %s: exit %d\n%s", format, code, stderr)
		}
		prefix := "time="
		if format == "json" {
			prefix = `{"time":`
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) < 2 {
			t.Fatalf("agora run --log-format %s logged %d lines:\n%s", format, len(lines), stderr)
		}
		for _, line := range lines {
			if !strings.HasPrefix(line, prefix) {
				t.Errorf("--log-format %s: a line in another format: %q\n%s", format, line, stderr)
			}
		}
	}
}
