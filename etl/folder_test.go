package etl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFolderProblem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "out.jsonl"), ""},
		{filepath.Join(dir, "new", "deeper", "out.jsonl"), ""},
		{filepath.Join(dir, "file", "sub", "out.jsonl"), filepath.Join(dir, "file") + " is a file, not a folder"},
	} {
		got := FolderProblem(tc.path)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("FolderProblem(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Fatal("FolderProblem created a folder")
	}
}
