package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sink or dead-letter queue path whose folder cannot be created (a file
// is in its way) is a diagnostic at the path's value; a missing folder
// that can be created is not, and checking creates nothing.
func TestAFolderThatCannotBeCreatedIsReportedAtThePath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "blocker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `format = "agora/v1"
[pipelines.a]
source = { type = "iterable", records = [{ id = 1 }] }
schedule = { mode = "once" }
dlq = { type = "file", path = "blocker/dead/letters.jsonl" }
[[pipelines.a.sinks]]
type = "file"
path = "new/folder/out.jsonl"
`
	name := filepath.Join(dir, "w.toml")
	_, err := Parse(name, []byte(doc), WithLookupEnv(noEnv))
	diags, ok := err.(Diagnostics)
	if !ok || len(diags) != 1 {
		t.Fatalf("want 1 diagnostic, got %v", err)
	}
	want := name + ":5:31: pipelines.a.dlq.path: the folder " + filepath.Join(dir, "blocker", "dead") + " cannot be created: " + filepath.Join(dir, "blocker") + " is a file"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Fatal("checking created a folder")
	}
}
