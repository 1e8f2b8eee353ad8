package etl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// writeLog records every Write its writer got.
type writeLog struct{ writes [][]byte }

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

// checkWholeLines fails unless every write ends a line and together they
// are want.
func checkWholeLines(t *testing.T, log *writeLog, want string) {
	t.Helper()
	var all bytes.Buffer
	for i, w := range log.writes {
		if len(w) == 0 || w[len(w)-1] != '\n' {
			t.Fatalf("write %d of %d (%d bytes) does not end a line: ...%q", i, len(log.writes), len(w), w[max(0, len(w)-20):])
		}
		all.Write(w)
	}
	if all.String() != want {
		t.Fatalf("written %d bytes, want %d", all.Len(), len(want))
	}
}

func TestLineWriterWritesOnlyWholeLinesWhateverTheirLength(t *testing.T) {
	log := &writeLog{}
	lw := newLineWriter(log, 64)
	var want strings.Builder
	for i, n := range []int{10, 50, 63, 64, 65, 200, 3, 1000, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 70} {
		line := strings.Repeat(string(rune('a'+i%26)), n) + "\n"
		want.WriteString(line)
		if _, err := lw.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	checkWholeLines(t, log, want.String())
	if len(log.writes) < 5 {
		t.Fatalf("%d writes: the buffer of 64 bytes was never written out before Flush", len(log.writes))
	}
}

func TestFileSinkRowsLargerThanTheBufferStayWhole(t *testing.T) {
	for _, format := range []string{FormatJSONL, FormatCSV} {
		t.Run(format, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out."+format)
			s, err := NewFileSink(FileSinkConfig{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// Opening happens at the first write; then the file is swapped
			// for a log of the writes.
			if err := s.Write(ctx, []Record{{"v": "x"}}); err != nil {
				t.Fatal(err)
			}
			log := &writeLog{}
			var lw *lineWriter
			if s.jsonl != nil {
				lw = s.jsonl.w
			} else {
				lw = s.lines
			}
			lw.buf = lw.buf[:0]
			lw.w = log
			var recs []Record
			for i := range 40 {
				recs = append(recs, Record{"v": strings.Repeat("y", (i%4)*lineBufferSize/2+1)})
			}
			if err := s.Write(ctx, recs); err != nil {
				t.Fatal(err)
			}
			if err := lw.Flush(); err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, r := range recs {
				v := r["v"].(string)
				if format == FormatJSONL {
					fmt.Fprintf(&want, "{\"v\":%q}\n", v)
				} else {
					want.WriteString(v + "\n")
				}
			}
			checkWholeLines(t, log, want.String())
			if len(log.writes) < 10 {
				t.Fatalf("only %d writes for %d large records", len(log.writes), len(recs))
			}
			s.f.Close()
			s.f = nil
		})
	}
}

func TestFileSinkConcurrentWritersInterleaveWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	const writers, batches, perBatch = 4, 20, 7
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s, err := NewFileSink(FileSinkConfig{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer s.Close()
			for b := range batches {
				recs := make([]Record, perBatch)
				for i := range recs {
					// Every third record is larger than the buffer.
					size := 10 + (b*perBatch+i)%3/2*(lineBufferSize+5000)
					recs[i] = Record{"w": json.Number(fmt.Sprint(w)), "pad": strings.Repeat("p", size)}
				}
				if err := s.Write(ctx, recs); err != nil {
					errs <- err
					return
				}
				if err := s.Flush(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4*lineBufferSize)
	count := map[string]int{}
	lines := 0
	for sc.Scan() {
		lines++
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d is not a whole record: %v (%d bytes)", lines, err, len(sc.Bytes()))
		}
		count[fmt.Sprint(rec["w"])]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		if got := count[fmt.Sprint(w)]; got != batches*perBatch {
			t.Errorf("writer %d: %d lines, want %d", w, got, batches*perBatch)
		}
	}
}
