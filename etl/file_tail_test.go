package etl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDropTornTail(t *testing.T) {
	long := strings.Repeat("x", tailChunk+10)
	tests := []struct{ in, want string }{
		{"", ""},
		{"{\"n\":1}\n", "{\"n\":1}\n"},
		{"{\"n\":1}\n{\"n\":", "{\"n\":1}\n"},
		{"{\"n\":", ""},
		{"a\n" + long, "a\n"},
		{long + "\n" + long, long + "\n"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, []byte(tt.in), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := dropTornTail(path); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != tt.want {
			t.Errorf("%.20q…: got %.20q… (%d bytes), want %.20q… (%d bytes)", tt.in, got, len(got), tt.want, len(tt.want))
		}
	}
}

func TestFileSinkStartsAfterATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	// A crash cut the second line short.
	if err := os.WriteFile(path, []byte("{\"n\":1}\n{\"n\":2,\"na"), 0o644); err != nil {
		t.Fatal(err)
	}
	sink, err := NewFileSink(FileSinkConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := sink.Write(ctx, []Record{{"n": 2}}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "{\"n\":1}\n{\"n\":2}\n" {
		t.Fatalf("file = %q, want the torn line gone and the record on a line of its own", got)
	}
}
