package etl

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileSinkAppendsAndFsyncsWhatItFlushes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(path, []byte(`{"old":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var synced []string // the file's content at each fsync
	orig := fsync
	fsync = func(f *os.File) error {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			return err
		}
		synced = append(synced, string(b))
		return orig(f)
	}
	t.Cleanup(func() { fsync = orig })

	s, err := NewFileSink(FileSinkConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Write(ctx, []Record{{"id": 1, "name": "a<b"}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"old":true}`+"\n" {
		t.Fatalf("written before Flush: %q", b)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want1 := `{"old":true}` + "\n" + `{"id":1,"name":"a<b"}` + "\n"
	if len(synced) != 1 || synced[0] != want1 {
		t.Fatalf("fsynced contents %q, want one fsync of %q", synced, want1)
	}
	if err := s.Write(ctx, []Record{{"id": json.Number("12345678901234567890")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want2 := want1 + `{"id":12345678901234567890}` + "\n"
	if len(synced) != 2 || synced[1] != want2 {
		t.Fatalf("Close must flush and fsync: %q", synced)
	}
}

func TestFileSinkRejectsRecordsJSONCannotEncode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s, err := NewFileSink(FileSinkConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Write(context.Background(), []Record{{"id": 1}, {"bad": math.NaN()}, {"id": 3}})
	var rej *RejectedError
	if !errors.As(err, &rej) || len(rej.Rejections) != 1 || rej.Rejections[0].Index != 1 {
		t.Fatalf("err = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\"id\":1}\n{\"id\":3}\n" {
		t.Fatalf("file = %q", b)
	}
}

func TestFileSinkCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	ctx := context.Background()
	s, err := NewFileSink(FileSinkConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Write(ctx, []Record{
		{"id": json.Number("1"), "name": "a,b", "tags": []any{"x"}},
		{"id": 2.5, "name": nil},
		{"id": 3, "extra": true},
	})
	var rej *RejectedError
	if !errors.As(err, &rej) || len(rej.Rejections) != 1 || rej.Rejections[0].Index != 2 ||
		!strings.Contains(rej.Rejections[0].Err.Error(), `field "extra" is not a column`) {
		t.Fatalf("err = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A second sink appends under the header already in the file.
	s2, _ := NewFileSink(FileSinkConfig{Path: path})
	if err := s2.Write(ctx, []Record{{"name": "z", "id": int64(4)}}); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	want := "id,name,tags\n1,\"a,b\",\"[\"\"x\"\"]\"\n2.5,,\n4,z,\n"
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Fatalf("file = %q\nwant   %q", b, want)
	}
}

func TestFileSinkConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  FileSinkConfig
		keys []string
	}{
		{FileSinkConfig{}, []string{"path"}},
		{FileSinkConfig{Path: "out.txt"}, []string{"format"}},
		{FileSinkConfig{Path: "out.txt", Format: "xml"}, []string{"format"}},
		{FileSinkConfig{Path: "out.txt", Format: "csv"}, nil},
		{FileSinkConfig{Path: "out.ndjson"}, nil},
	} {
		assertFieldKeys(t, tc.cfg.Validate(), tc.keys)
	}
	if _, err := NewFileSink(FileSinkConfig{}); err == nil {
		t.Fatal("NewFileSink accepted an empty path")
	}
	// Missing folders are created; a folder that cannot be (a file is in
	// the way) fails with the path.
	dir := t.TempDir()
	s, _ := NewFileSink(FileSinkConfig{Path: filepath.Join(dir, "no", "such", "dir.jsonl")})
	if err := s.Write(context.Background(), []Record{{}}); err != nil {
		t.Fatalf("missing folders: %v", err)
	}
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ = NewFileSink(FileSinkConfig{Path: filepath.Join(dir, "file", "sub", "out.jsonl")})
	if err := s.Open(context.Background()); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "file", "sub", "out.jsonl")) {
		t.Fatalf("a file in the way: %v, want an error naming the path", err)
	}
}

// assertFieldKeys checks that err joins *FieldErrors for exactly keys.
func assertFieldKeys(t *testing.T, err error, keys []string) {
	t.Helper()
	var got []string
	if err != nil {
		var errs []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		} else {
			errs = []error{err}
		}
		for _, e := range errs {
			var fe *FieldError
			if !errors.As(e, &fe) {
				t.Fatalf("%v is not a *FieldError", e)
			}
			got = append(got, fe.Key)
		}
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Fatalf("error keys %v, want %v (err: %v)", got, keys, err)
	}
}
