package etl

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readAll reads src to its end in batches of max.
func readAll(t *testing.T, src Source, max int) ([]Record, error) {
	t.Helper()
	var out []Record
	for {
		b, err := src.Read(context.Background(), max)
		if len(b.Records) > max {
			t.Fatalf("batch of %d, max %d", len(b.Records), max)
		}
		out = append(out, b.Records...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func TestFileSourceReadsGlobInSortedOrder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.jsonl"), `{"n":3}`+"\n"+`{"n":4,"big":12345678901234567890}`+"\n")
	writeFile(t, filepath.Join(dir, "a.jsonl"), `{"n":1}`+"\n\n"+`{"n":2, "nested":{"x":[1,"y"]}}`)
	writeFile(t, filepath.Join(dir, "c.csv"), "n,name\n5,\"e, f\"\n6,g\n")
	writeFile(t, filepath.Join(dir, "empty.csv"), "")
	if err := os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o755); err != nil { // a directory: skipped
		t.Fatal(err)
	}
	src, err := NewFileSource(FileSourceConfig{Path: filepath.Join(dir, "*")})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readAll(t, src, 4)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(recs)
	want := `[{"n":1},{"n":2,"nested":{"x":[1,"y"]}},{"n":3},{"big":12345678901234567890,"n":4},{"n":"5","name":"e, f"},{"n":"6","name":"g"}]`
	if string(b) != want {
		t.Fatalf("records %s\nwant    %s", b, want)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFileSourceErrorsSayWhere(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"syntax.jsonl", "{\"a\":1}\n\n  {\"a\":\n", "syntax.jsonl:3: unexpected EOF"},
		{"broken.jsonl", "{\"a\":1}\n{\"a\" 2}\n", "broken.jsonl:2: invalid character"},
		{"array.jsonl", "{\"a\":1}\n[1,2]\n{}\n", "array.jsonl:2: a JSON array is not an object"},
		{"null.jsonl", "{}\nnull\n", "null.jsonl:2: null is not a JSON object"},
		{"ragged.csv", "a,b\n1,2\n3\n", "ragged.csv:3:1: wrong number of fields"},
		{"dup.csv", "a,b,a\n1,2,3\n", "dup.csv:1: column 3 repeats the field name \"a\" of column 1"},
		{"odd.txt", "x", "cannot tell the format of"},
	} {
		path := filepath.Join(dir, tc.name)
		writeFile(t, path, tc.content)
		src, err := NewFileSource(FileSourceConfig{Path: filepath.Join(dir, "["+tc.name[:1]+"]"+tc.name[1:])})
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll(t, src, 10)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		src.Close()
	}
	src, _ := NewFileSource(FileSourceConfig{Path: filepath.Join(dir, "missing.jsonl")})
	if _, err := readAll(t, src, 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file named without a glob: %v", err)
	}
	src, _ = NewFileSource(FileSourceConfig{Path: filepath.Join(dir, "none-*.jsonl")})
	if recs, err := readAll(t, src, 10); err != nil || len(recs) != 0 {
		t.Errorf("a glob matching nothing: %v, %v", recs, err)
	}
}

func TestFileSourceConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  FileSourceConfig
		keys []string
	}{
		{FileSourceConfig{}, []string{"path"}},
		{FileSourceConfig{Path: "in/[x.jsonl"}, []string{"path"}},
		{FileSourceConfig{Path: "in/x.txt"}, []string{"format"}},
		{FileSourceConfig{Path: "in/*", Format: "yaml"}, []string{"format"}},
		{FileSourceConfig{Path: "", Format: "yaml"}, []string{"path", "format"}},
		{FileSourceConfig{Path: "in/*"}, nil},
		{FileSourceConfig{Path: "in/x.CSV"}, nil},
	} {
		assertFieldKeys(t, tc.cfg.Validate(), tc.keys)
	}
}

func TestIterableSource(t *testing.T) {
	src := newIterableFromConfig(IterableSourceConfig{Records: []map[string]any{{"id": int64(1)}, {"id": int64(2)}, {"id": int64(3)}}})
	recs, err := readAll(t, src, 2)
	if err != nil || len(recs) != 3 || recs[2]["id"] != int64(3) {
		t.Fatalf("%v %v", recs, err)
	}
	if b, err := src.Read(context.Background(), 2); !errors.Is(err, io.EOF) || len(b.Records) != 0 {
		t.Fatalf("after the end: %v %v", b, err)
	}
}

func TestStdoutSinkWritesJSONLines(t *testing.T) {
	var out strings.Builder
	s := NewStdoutSink(&out)
	if err := s.Write(context.Background(), []Record{{"id": int64(1)}, {"b": "x", "a": []any{1}}}); err != nil {
		t.Fatal(err)
	}
	// Written through at once: no Flush needed to see it.
	if got, want := out.String(), "{\"id\":1}\n{\"a\":[1],\"b\":\"x\"}\n"; got != want {
		t.Fatalf("stdout = %q, want %q", got, want)
	}
}

func TestFileSourceLongLinesAndCRLF(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("z", 200<<10) // longer than the read buffer
	writeFile(t, filepath.Join(dir, "in.jsonl"), "{\"a\":1}\r\n{\"long\":\""+long+"\"}\n\r\n{\"a\":\"caf\\u00e9\"}")
	src, _ := NewFileSource(FileSourceConfig{Path: filepath.Join(dir, "in.jsonl")})
	recs, err := readAll(t, src, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0]["a"] != json.Number("1") || recs[1]["long"] != long || recs[2]["a"] != "café" {
		t.Fatalf("got %d records: %.80v", len(recs), recs)
	}
	writeFile(t, filepath.Join(dir, "two.jsonl"), "{}\n{\"a\":1} {\"b\":2}\n")
	src, _ = NewFileSource(FileSourceConfig{Path: filepath.Join(dir, "two.jsonl")})
	if _, err := readAll(t, src, 10); err == nil || !strings.Contains(err.Error(), "two.jsonl:2: more than one JSON value") {
		t.Fatalf("err = %v", err)
	}
}
