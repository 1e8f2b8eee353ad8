package runtime_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// slotDone is the error of a run a fenced sink refused because another run
// completed its slot, as etl/fencing's SlotDoneError reads: anything
// wrapping runtime.ErrSlotCompleted (fencing.ErrSlotDone matches it; its
// own tests say so). runtime's tests do not import etl, a module of its own.
func slotDone(completedBy int64) error {
	return fmt.Errorf("fencing: slot done: resource \"orders\": completed by token %d: %w", completedBy, runtime.ErrSlotCompleted)
}

// A run its database refused because another run completed the slot
// (fencing.ErrSlotDone) ends the slot: no retry after the backoff, no
// error counted, the next slot runs on schedule.
func TestSlotDoneRunIsNotRetried(t *testing.T) {
	slot := time.Date(2025, 3, 10, 10, 10, 0, 0, time.UTC)
	refused := slotDone(1)
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, logs *syncBuffer) {
		rec := &recorder{}
		sp := &runtime.ScheduledPipeline{PipelineID: "c", Schedule: runtime.MustCron("*/5 * * * *"), ErrorBackoff: 2 * time.Minute,
			MaxConsecutiveErrors: 2, Factory: failingFactory(clock, rec, refused)}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return rec.count() >= 3 })
		// A failed run would be retried at 10:12; a refused one is not, and
		// three in a row do not reach MaxConsecutiveErrors.
		want := []time.Time{slot, slot.Add(5 * time.Minute), slot.Add(10 * time.Minute)}
		if got := rec.times()[:3]; !reflect.DeepEqual(got, want) {
			t.Fatalf("attempts at %v, want %v", got, want)
		}
		if _, pooled := d.(*poolDriver); pooled {
			st := d.status(t, "c")
			if st.ConsecutiveErrors != 0 || st.Failures != 0 || st.Skipped < 3 || !strings.Contains(st.LastError, "slot done") {
				t.Fatalf("status %+v, want no failure, the refusals counted as skipped and the refusal as last error", st)
			}
		}
		if !strings.Contains(logs.String(), "another run already completed this slot") || strings.Contains(logs.String(), `"run failed"`) {
			t.Fatalf("the refusal was not logged as such:\n%s", logs.String())
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// The refused run's lease is completed, not released, so the rest of the
// fleet skips the slot too.
func TestSlotDoneRunCompletesItsLease(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFakeCoord()
	rec := &recorder{}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "c", Schedule: runtime.MustCron("*/5 * * * *"), ErrorBackoff: time.Minute,
		Factory: failingFactory(clock, rec, slotDone(1))})
	advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return rec.count() >= 1 })
	d.settle(t)
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	calls := coord.callLog()
	if !slices.Contains(calls, "complete c") || slices.Contains(calls, "release c") {
		t.Fatalf("coordinator calls %v, want the lease completed, never released", calls)
	}
}
