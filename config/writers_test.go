package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

func TestTwoWritersOfOneFileAreRefusedWithBothPositions(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.a]
source = { type = "iterable", records = [{ id = 1 }] }
schedule = { mode = "once" }
dlq = { type = "file", path = "./out/../shared.jsonl" }
[[pipelines.a.sinks]]
type = "file"
path = "shared.jsonl"
[pipelines.b]
source = { type = "iterable", records = [{ id = 1 }] }
schedule = { mode = "once" }
[[pipelines.b.sinks]]
type = "file"
path = "other.jsonl"
[[pipelines.b.sinks]]
type = "file"
path = "PLACEHOLDER"
`
	dir := t.TempDir()
	// An absolute path naming the same file as a relative one is the same
	// writer.
	doc = strings.Replace(doc, "PLACEHOLDER", filepath.Join(dir, "shared.jsonl"), 1)
	_, err := Parse(filepath.Join(dir, "w.toml"), []byte(doc), WithLookupEnv(noEnv))
	diags, ok := err.(Diagnostics)
	if !ok || len(diags) != 2 {
		t.Fatalf("want 2 diagnostics, got %v", err)
	}
	name := filepath.Join(dir, "w.toml")
	for _, want := range []string{
		name + ":5:31: pipelines.a.dlq.path: " + filepath.Join(dir, "shared.jsonl") + " is also written by pipelines.a.sinks[0].path (" + name + ":8:8)",
		name + ":17:8: pipelines.b.sinks[1].path: " + filepath.Join(dir, "shared.jsonl") + " is also written by pipelines.a.sinks[0].path (" + name + ":8:8)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}

func TestRelativePathsStartAtTheConfigFilesDirectory(t *testing.T) {
	dir := t.TempDir()
	doc := `format = "agora/v1"
[pipelines.a]
source = { type = "file", path = "in/*.jsonl", after_read = "move", move_to = "done" }
schedule = { mode = "once" }
dlq = { type = "file", path = "dead.jsonl" }
sinks = [{ type = "file", path = "/abs/out.jsonl" }]
`
	f, err := Parse(filepath.Join(dir, "conf", "p.toml"), []byte(doc), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Pipelines[0]
	src := p.Source.Config.(*etl.FileSourceConfig)
	base := filepath.Join(dir, "conf")
	if src.Path != filepath.Join(base, "in", "*.jsonl") || src.MoveTo != filepath.Join(base, "done") {
		t.Errorf("source paths = %q, %q", src.Path, src.MoveTo)
	}
	if got := p.DLQ.Config.(*etl.FileSinkConfig).Path; got != filepath.Join(base, "dead.jsonl") {
		t.Errorf("dlq path = %q", got)
	}
	if got := p.Sinks[0].Config.(*etl.FileSinkConfig).Path; got != "/abs/out.jsonl" {
		t.Errorf("absolute sink path = %q", got)
	}
}
