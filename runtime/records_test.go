package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

func TestCountRecordsOutsideARunDoesNothing(t *testing.T) {
	// No tally in the context: the call must neither panic nor count.
	runtime.CountRecords(context.Background(), history.RecordCounts{In: 3})

	ctx, read := runtime.ContextWithRecordCounts(context.Background())
	runtime.CountRecords(ctx, history.RecordCounts{In: 3, Out: 2})
	runtime.CountRecords(ctx, history.RecordCounts{Out: 1, DeadLettered: 1})
	if got, want := read(), (history.RecordCounts{In: 3, Out: 3, DeadLettered: 1}); got != want {
		t.Fatalf("tally = %+v, want %+v", got, want)
	}
}

func TestPoolTotalsRecordCountsPerPipeline(t *testing.T) {
	clock := clocktest.NewFake(t0)
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs}
	runs := 0
	sp := &runtime.ScheduledPipeline{
		PipelineID: "records",
		Schedule:   runtime.Every(time.Minute),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				runs++
				runtime.CountRecords(ctx, history.RecordCounts{In: 10, Out: 7, DeadLettered: 2, Filtered: 1})
				return nil
			}), nil
		},
	}
	d.start(t, sp)
	d.settle(t)
	advanceTo(t, clock, d, t0.Add(time.Minute+time.Second))
	d.settle(t)

	st := d.status(t, "records")
	if runs != 2 {
		t.Fatalf("runs = %d, want 2", runs)
	}
	if want := (history.RecordCounts{In: 20, Out: 14, DeadLettered: 4, Filtered: 2}); st.Records != want {
		t.Fatalf("status records = %+v, want %+v", st.Records, want)
	}
	if n := strings.Count(logs.String(), `"records_in":10,"records_out":7,"records_dead_lettered":2,"records_filtered":1`); n != 2 {
		t.Fatalf("want each run's counts logged once per run, found %d in:\n%s", n, logs.String())
	}
	if err := d.stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
