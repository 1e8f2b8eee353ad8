package etl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Discard takes back the lines a batch had to write out of the buffer
// before it was flushed (a batch larger than the buffer), and keeps what
// was flushed.
func TestFileSinkDiscardTakesBackUnflushedLines(t *testing.T) {
	for _, format := range []string{"jsonl", "csv"} {
		t.Run(format, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out."+format)
			s, err := NewFileSink(FileSinkConfig{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			batch := func(from int) []Record {
				recs := make([]Record, 2000)
				for i := range recs {
					recs[i] = Record{"id": from + i, "pad": strings.Repeat("x", 60)}
				}
				return recs
			}
			if err := s.Write(ctx, batch(0)); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			flushed, _ := os.ReadFile(path)
			if err := s.Write(ctx, batch(2000)); err != nil {
				t.Fatal(err)
			}
			if st, _ := os.Stat(path); st.Size() <= int64(len(flushed)) {
				t.Fatal("the second batch did not overflow the buffer: the test shows nothing")
			}
			s.Discard()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != string(flushed) {
				t.Fatalf("after Discard the file has %d bytes, want the %d flushed", len(got), len(flushed))
			}
			// Another writer's append after ours is not ours to cut.
			s2, _ := NewFileSink(FileSinkConfig{Path: path})
			if err := s2.Write(ctx, batch(4000)); err != nil {
				t.Fatal(err)
			}
			s2.lines, s2.jsonl = flushAll(s2)
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			fmt.Fprintln(f, "other")
			f.Close()
			s2.Discard()
			s2.Close()
			if got, _ := os.ReadFile(path); !strings.HasSuffix(string(got), "other\n") {
				t.Fatal("Discard cut another writer's line")
			}
		})
	}
}

// flushAll writes a sink's buffer out without fsync or marking it
// flushed, as an overflowing buffer does.
func flushAll(s *FileSink) (*lineWriter, *jsonlWriter) {
	if s.jsonl != nil {
		_ = s.jsonl.w.Flush()
	} else {
		_ = s.lines.Flush()
	}
	return s.lines, s.jsonl
}
