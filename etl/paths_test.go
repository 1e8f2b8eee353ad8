package etl

import (
	"path/filepath"
	"testing"
)

func TestResolvePathsJoinsRelativePathsOnly(t *testing.T) {
	dir := t.TempDir()
	c := &FileSinkConfig{Path: "out/x.jsonl"}
	c.ResolvePaths(dir)
	if want := filepath.Join(dir, "out", "x.jsonl"); c.Path != want || c.WritesFile() != want {
		t.Fatalf("relative: %q, want %q", c.Path, want)
	}
	abs := &FileSinkConfig{Path: "/var/x.jsonl"}
	abs.ResolvePaths(dir)
	if abs.Path != "/var/x.jsonl" {
		t.Fatalf("absolute path changed to %q", abs.Path)
	}
	src := &FileSourceConfig{Path: "in/*.csv", MoveTo: "done"}
	src.ResolvePaths(dir)
	if src.Path != filepath.Join(dir, "in", "*.csv") || src.MoveTo != filepath.Join(dir, "done") {
		t.Fatalf("source: %+v", src)
	}
}
