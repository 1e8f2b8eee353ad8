package etl

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// null_if turns the CSV cells it lists into nulls; other cells, and every
// cell without null_if, stay strings.
func TestFileSourceNullIf(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.csv"), "id,at,note\n1,,NULL\n2,2026-01-01T00:00:00Z,\"\"\n3,-,x\n")
	for _, tc := range []struct {
		nullIf []string
		want   string
	}{
		{nil, `[{"at":"","id":"1","note":"NULL"},{"at":"2026-01-01T00:00:00Z","id":"2","note":""},{"at":"-","id":"3","note":"x"}]`},
		{[]string{""}, `[{"at":null,"id":"1","note":"NULL"},{"at":"2026-01-01T00:00:00Z","id":"2","note":null},{"at":"-","id":"3","note":"x"}]`},
		{[]string{"", "NULL", "-"}, `[{"at":null,"id":"1","note":null},{"at":"2026-01-01T00:00:00Z","id":"2","note":null},{"at":null,"id":"3","note":"x"}]`},
	} {
		src, err := NewFileSource(FileSourceConfig{Path: filepath.Join(dir, "a.csv"), NullIf: tc.nullIf, State: StateNone})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := readAll(t, src, 2)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(recs)
		if string(b) != tc.want {
			t.Errorf("null_if %q:\n got %s\nwant %s", tc.nullIf, b, tc.want)
		}
		src.Close()
	}
}

func TestFileSourceNullIfValidate(t *testing.T) {
	assertFieldKeys(t, FileSourceConfig{Path: "a.jsonl", Format: "jsonl", NullIf: []string{""}}.Validate(), []string{"null_if"})
	assertFieldKeys(t, FileSourceConfig{Path: "a.ndjson", NullIf: []string{""}}.Validate(), []string{"null_if"})
	assertFieldKeys(t, FileSourceConfig{Path: "a.csv", NullIf: []string{"", ""}}.Validate(), []string{"null_if"})
	assertFieldKeys(t, FileSourceConfig{Path: "in/*", NullIf: []string{"", "NULL"}}.Validate(), nil)
}
