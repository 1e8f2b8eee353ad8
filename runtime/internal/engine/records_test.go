package engine

import (
	"context"
	"testing"

	"github.com/agora-etl/agora/runtime/history"
)

func TestCountRecords(t *testing.T) {
	CountRecords(context.Background(), history.RecordCounts{In: 1}) // outside a run: nothing
	ctx, read := ContextWithRecordCounts(context.Background())
	CountRecords(ctx, history.RecordCounts{In: 2, Out: 1})
	CountRecords(ctx, history.RecordCounts{DeadLettered: 1, Filtered: 3})
	if got := read(); got != (history.RecordCounts{In: 2, Out: 1, DeadLettered: 1, Filtered: 3}) {
		t.Fatalf("tally %+v", got)
	}
	var tally recordTally
	tally.add(history.RecordCounts{})
	if !tally.counting.Load() || !tally.snapshot().IsZero() {
		t.Fatal("a zero count must mark the run as counting and add nothing")
	}
	if attrs := recordAttrs(history.RecordCounts{In: 4}); len(attrs) != 4 || attrs[0].Value.Int64() != 4 {
		t.Fatalf("attrs %v", attrs)
	}
}
