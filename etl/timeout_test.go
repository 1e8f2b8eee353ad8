package etl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// The repro: the run's timeout fires while a transform works on
// the second batch (as a slow CEL expression would). The first batch was
// acknowledged and stays; nothing of the second reaches the file, neither
// by a write nor by the flush at close.
func TestARunPastItsContextWritesNothingMore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow := etl.TransformFunc(func(_ context.Context, r etl.Record) (etl.Record, bool, error) {
		if r["id"] == 3 {
			cancel() // the timeout fires during this record
		}
		return r, true, nil
	})
	path := filepath.Join(t.TempDir(), "out.jsonl")
	sink, err := etl.NewFileSink(etl.FileSinkConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	src := &ackSource{n: 6}
	err = etl.New(src, []etl.Sink{sink}, etl.WithBatchSize(2), etl.WithTransforms(slow)).Run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run = %v, want context.Canceled", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "{\"id\":0}\n{\"id\":1}\n" {
		t.Fatalf("file = %q, want the first batch only", got)
	}
	if len(src.acked) != 1 {
		t.Fatalf("acknowledged batches %v, want the first only", src.acked)
	}
}

// A sink that cannot tell (no Discarder, no context check of its own) is
// still not written to once the context ended: the pipeline checks before
// every write.
func TestThePipelineChecksTheContextBeforeEveryWrite(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	first := &memSink{name: "first"}
	second := &memSink{name: "second"}
	cancelling := etl.TransformFunc(func(_ context.Context, r etl.Record) (etl.Record, bool, error) {
		cancel()
		return r, true, nil
	})
	err := etl.New(&ackSource{n: 2}, []etl.Sink{first, second}, etl.WithTransforms(cancelling)).Run(ctx)
	if !errors.Is(err, context.Canceled) || len(first.records())+len(second.records()) != 0 {
		t.Fatalf("run = %v with %d + %d records written, want context.Canceled and nothing", err, len(first.records()), len(second.records()))
	}
}
