package etl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// openSink records whether it was opened before anything was read.
type openSink struct {
	memSink
	src    *ackSource
	opened bool
	early  bool // opened before the source's first read
}

func (s *openSink) Open(context.Context) error {
	s.opened, s.early = true, s.src.batches == 0
	return nil
}

// Every sink and the dead-letter queue are opened before the run reads;
// a dead-letter queue that cannot open (a file is where its folder should
// be) fails the run with its path before a record was read or written.
func TestARunThatCannotOpenADLQWritesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "blocker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src := &ackSource{n: 5}
	first := &openSink{memSink: memSink{name: "first"}, src: src}
	dlqPath := filepath.Join(dir, "blocker", "dead", "letters.jsonl")
	dlq, err := etl.NewFileSink(etl.FileSinkConfig{Path: dlqPath})
	if err != nil {
		t.Fatal(err)
	}
	err = etl.New(src, []etl.Sink{first}, etl.WithDLQ(dlq)).Run(context.Background())
	if !errors.Is(err, etl.ErrDLQFailed) || !strings.Contains(err.Error(), dlqPath) {
		t.Fatalf("run = %v, want ErrDLQFailed naming %s", err, dlqPath)
	}
	if !first.opened || !first.early {
		t.Fatalf("the sink was not opened before the first read (opened %v, before reading %v)", first.opened, first.early)
	}
	if src.batches != 0 || len(first.records()) != 0 {
		t.Fatalf("read %d batches and wrote %d records, want nothing", src.batches, len(first.records()))
	}
}

// A file sink's missing parent folders are created when the run opens it,
// before the first read, even for a run that then reads nothing.
func TestFileSinkFoldersAreCreatedAtOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "out.jsonl")
	sink, err := etl.NewFileSink(etl.FileSinkConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := etl.New(&ackSource{n: 0}, []etl.Sink{sink}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file was not created at open: %v", err)
	}
}
