package sinktest

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// Drain reads src to the end with batches of at most max records and
// returns the batch sizes, every record, and the last batch's Ack (nil
// when there was none). It does not acknowledge anything.
func Drain(t testing.TB, ctx context.Context, src etl.Source, max int) (sizes []int, recs []etl.Record, lastAck func(context.Context) error) {
	t.Helper()
	for range 100000 {
		b, err := src.Read(ctx, max)
		if errors.Is(err, io.EOF) {
			if len(b.Records) != 0 {
				t.Fatalf("io.EOF with %d records", len(b.Records))
			}
			return sizes, recs, lastAck
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(b.Records) > max {
			t.Fatalf("batch of %d records, max %d", len(b.Records), max)
		}
		sizes = append(sizes, len(b.Records))
		recs = append(recs, b.Records...)
		lastAck = b.Ack
	}
	t.Fatal("source never ended")
	return nil, nil, nil
}

// Slot returns the context of a cron or every run of pipeline at the slot
// starting at unix seconds.
func Slot(pipeline string, unix, token int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: pipeline, WorkerID: "w", RunNumber: unix, Slot: true, FencingToken: token})
}
