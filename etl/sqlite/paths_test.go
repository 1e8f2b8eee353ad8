package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// A config file's relative database path means the file beside it,
// whatever the working directory.
func TestPathsResolveAgainstTheConfigDirectory(t *testing.T) {
	dir := filepath.FromSlash("/etc/agora")
	for p, want := range map[string]string{
		"w.db":                      filepath.Join(dir, "w.db"),
		"data/w.db":                 filepath.Join(dir, "data", "w.db"),
		filepath.FromSlash("/x.db"): filepath.FromSlash("/x.db"),
		":memory:":                  ":memory:",
		"file:w.db?mode=ro":         "file:w.db?mode=ro",
		"":                          "",
	} {
		sink, src := &SinkConfig{Path: p}, &SourceConfig{Path: p}
		var _, _ etl.PathResolver = sink, src
		sink.ResolvePaths(dir)
		src.ResolvePaths(dir)
		if sink.Path != want || src.Path != want {
			t.Errorf("%q: sink %q, source %q, want %q", p, sink.Path, src.Path, want)
		}
	}
}
