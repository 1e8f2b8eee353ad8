package runtime_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

// Rule: a Continuous run that counts records (CountRecords, as etl
// pipelines do) and read none logs "run finished" at DEBUG; a run that
// moved records logs it at INFO.
func TestIdleContinuousRunLogsRunFinishedAtDebug(t *testing.T) {
	clock := clocktest.NewFake(t0)
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs}
	var runs atomic.Int32
	sp := &runtime.ScheduledPipeline{
		PipelineID: "stream",
		Schedule:   runtime.Continuous(),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				switch runs.Add(1) {
				case 1:
					runtime.CountRecords(ctx, history.RecordCounts{In: 2, Out: 2})
				case 2, 3:
					runtime.CountRecords(ctx, history.RecordCounts{}) // read nothing
				default:
					runtime.CountRecords(ctx, history.RecordCounts{})
					<-runtime.ShutdownRequested(ctx)
				}
				return nil
			}), nil
		},
	}
	d.start(t, sp)
	waitRuns(t, &runs, 4)
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	var info, debug int
	for _, line := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(line, `"msg":"run finished"`) {
			continue
		}
		switch {
		case strings.Contains(line, `"level":"INFO"`) && strings.Contains(line, `"records_in":2`):
			info++
		case strings.Contains(line, `"level":"DEBUG"`) && !strings.Contains(line, "records_in"):
			debug++
		default:
			t.Errorf("unexpected run finished line: %s", line)
		}
	}
	if info != 1 || debug < 3 {
		t.Fatalf("run finished: %d at INFO with records (want 1), %d at DEBUG without (want at least 3):\n%s", info, debug, logs)
	}
}

// Rule: a Continuous pipeline that never counts records keeps its
// "run finished" at INFO: nothing says it was idle.
func TestContinuousRunWithoutRecordCountsLogsRunFinishedAtInfo(t *testing.T) {
	clock := clocktest.NewFake(t0)
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs}
	var runs atomic.Int32
	sp := &runtime.ScheduledPipeline{
		PipelineID: "plain",
		Schedule:   runtime.Continuous(),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				if runs.Add(1) > 1 {
					<-runtime.ShutdownRequested(ctx)
				}
				return nil
			}), nil
		},
	}
	d.start(t, sp)
	waitRuns(t, &runs, 2)
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), `"level":"INFO","msg":"run finished"`); n < 1 {
		t.Fatalf("no INFO run finished:\n%s", logs)
	}
}

// waitRuns waits until *runs reaches n: Continuous runs follow each other
// without a clock move.
func waitRuns(t *testing.T, runs *atomic.Int32, n int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runs.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs, want %d", runs.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
