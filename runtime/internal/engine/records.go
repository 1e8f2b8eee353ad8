package engine

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/agora-etl/agora/runtime/history"
)

// recordTally is the counter a run's context carries; record pipelines add
// to it from whatever goroutine moves their batches.
type recordTally struct {
	in, out, dead, filtered atomic.Int64
	// counting is set by the first CountRecords call, zero counts
	// included: the run is one that counts its records, so a tally of
	// zero means it read nothing.
	counting atomic.Bool
}

func (t *recordTally) add(c history.RecordCounts) {
	if !t.counting.Load() {
		t.counting.Store(true)
	}
	if c.In != 0 {
		t.in.Add(c.In)
	}
	if c.Out != 0 {
		t.out.Add(c.Out)
	}
	if c.DeadLettered != 0 {
		t.dead.Add(c.DeadLettered)
	}
	if c.Filtered != 0 {
		t.filtered.Add(c.Filtered)
	}
}

func (t *recordTally) snapshot() history.RecordCounts {
	return history.RecordCounts{In: t.in.Load(), Out: t.out.Load(), DeadLettered: t.dead.Load(), Filtered: t.filtered.Load()}
}

// recordAttrs are the log attributes of a run that moved records.
func recordAttrs(c history.RecordCounts) []slog.Attr {
	return []slog.Attr{
		slog.Int64("records_in", c.In),
		slog.Int64("records_out", c.Out),
		slog.Int64("records_dead_lettered", c.DeadLettered),
		slog.Int64("records_filtered", c.Filtered),
	}
}

// CountRecords adds c to the tally of the run ctx belongs to, if any;
// runtime.CountRecords documents it.
func CountRecords(ctx context.Context, c history.RecordCounts) {
	if t, ok := ctx.Value(recordsKey{}).(*recordTally); ok {
		t.add(c)
	}
}

// ContextWithRecordCounts returns a copy of ctx that tallies CountRecords
// calls, and a function that reads the tally.
func ContextWithRecordCounts(ctx context.Context) (context.Context, func() history.RecordCounts) {
	t := new(recordTally)
	return context.WithValue(ctx, recordsKey{}, t), t.snapshot
}
