package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
