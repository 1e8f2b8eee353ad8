package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// jumpClock behaves like the real clock under a wall-clock step: Now jumps,
// timers (which measure elapsed time, like the monotonic clock) do not.
// Elapsed time is the embedded fake's.
type jumpClock struct {
	*clocktest.Fake
	mu     sync.Mutex
	offset time.Duration
}

func (j *jumpClock) Now() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.Fake.Now().Add(j.offset)
}

func (j *jumpClock) jump(d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.offset += d
}

// wall returns the wall time seen by the code for elapsed fake time e.
func (j *jumpClock) wall(e time.Time) time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return e.Add(j.offset)
}

type wallRecorder struct {
	mu    sync.Mutex
	walls []time.Time
	nums  []int64
}

func (w *wallRecorder) factory(clock runtime.Clock) runtime.Factory {
	return func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			l, _ := runtime.LeaseFromContext(ctx)
			w.mu.Lock()
			defer w.mu.Unlock()
			w.walls = append(w.walls, clock.Now())
			w.nums = append(w.nums, l.RunNumber)
			return nil
		}), nil
	}
}

func (w *wallRecorder) get() ([]time.Time, []int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.walls...), append([]int64(nil), w.nums...)
}

func forEachModeJump(t *testing.T, body func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, logs *syncBuffer)) {
	forEachMode(t, func(t *testing.T, fake *clocktest.Fake, d driver, logs *syncBuffer) {
		jc := &jumpClock{Fake: fake}
		d.useClock(jc)
		body(t, fake, jc, d, logs)
	})
}

func TestForwardJumpSkipsStaleSlotsAndCountsThem(t *testing.T) {
	forEachModeJump(t, func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, logs *syncBuffer) {
		rec := &wallRecorder{}
		d.start(t, &runtime.ScheduledPipeline{PipelineID: "hourly", Schedule: runtime.MustCron("0 * * * *"), Factory: rec.factory(jc)})
		d.settle(t)
		// 10:07:30 → 13:30:00: slots 11:00, 12:00, 13:00 are all more than
		// the grace late; none runs, the next is 14:00.
		jc.jump(3*time.Hour + 22*time.Minute + 30*time.Second)
		start := time.Now()
		advanceTo(t, fake, d, t0.Add(time.Second))
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("jump noticed after %v", el)
		}
		if walls, _ := rec.get(); len(walls) != 0 {
			t.Fatalf("stale slots ran: %v", walls)
		}
		if !strings.Contains(logs.String(), `"missed_slots":3`) {
			t.Fatalf("missed slots not logged:\n%s", logs.String())
		}
		if pd, ok := d.(*poolDriver); ok {
			if st := pd.status(t, "hourly"); st.MissedSlots != 3 || st.NextRun == nil || !st.NextRun.Equal(time.Date(2025, 3, 10, 14, 0, 0, 0, time.UTC)) {
				t.Fatalf("status %+v", st)
			}
		}
		advanceTo(t, fake, d, t0.Add(31*time.Minute))
		walls, nums := rec.get()
		want := time.Date(2025, 3, 10, 14, 0, 0, 0, time.UTC)
		if len(walls) != 1 || !walls[0].Equal(want) || nums[0] != want.Unix() {
			t.Fatalf("runs %v %v, want one at 14:00", walls, nums)
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSmallForwardJumpRunsSlotLate(t *testing.T) {
	forEachModeJump(t, func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, logs *syncBuffer) {
		rec := &wallRecorder{}
		d.start(t, &runtime.ScheduledPipeline{PipelineID: "minutely", Schedule: runtime.MustCron("* * * * *"), Factory: rec.factory(jc)})
		d.settle(t)
		jc.jump(50 * time.Second) // 10:07:30 → 10:08:20: 10:08 is 20 s late
		advanceTo(t, fake, d, t0.Add(time.Second))
		walls, nums := rec.get()
		slot := time.Date(2025, 3, 10, 10, 8, 0, 0, time.UTC)
		// The jump is noticed at the next wake-up, a second at most later.
		if len(walls) != 1 || nums[0] != slot.Unix() || walls[0].Before(slot.Add(20*time.Second)) || walls[0].After(slot.Add(21*time.Second)) {
			t.Fatalf("runs %v %v, want slot 10:08 run 20-21 s late", walls, nums)
		}
		if strings.Contains(logs.String(), "missed_slots") {
			t.Fatal("a slot within the grace was reported missed")
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStallRunsOnlyNewestSlot(t *testing.T) {
	forEachModeJump(t, func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, logs *syncBuffer) {
		rec := &wallRecorder{}
		d.start(t, &runtime.ScheduledPipeline{PipelineID: "secondly", Schedule: runtime.MustCron("* * * * * *"), Factory: rec.factory(jc)})
		d.settle(t)
		jc.jump(5*time.Second + 500*time.Millisecond) // 10:07:30 → 10:07:35.5 before the first timer
		advanceTo(t, fake, d, t0.Add(time.Second))
		_, nums := rec.get()
		first := time.Date(2025, 3, 10, 10, 7, 31, 0, time.UTC).Unix()
		// Noticed at once (wall 35.5) the jump runs slot 35 and skips 31-34,
		// then 36 runs on time; noticed a second later it runs 36 and skips
		// 31-35. Either way no burst of catch-up runs and no slot twice.
		var missed int
		switch {
		case reflect.DeepEqual(nums, []int64{first + 4, first + 5}):
			missed = 4
		case reflect.DeepEqual(nums, []int64{first + 5}):
			missed = 5
		default:
			t.Fatalf("ran %v; slots %d-%d were due", nums, first, first+5)
		}
		if !strings.Contains(logs.String(), fmt.Sprintf(`"missed_slots":%d`, missed)) {
			t.Fatalf("missed slots not counted:\n%s", logs.String())
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBackwardJumpNeverRerunsCronSlot(t *testing.T) {
	forEachModeJump(t, func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, _ *syncBuffer) {
		rec := &wallRecorder{}
		d.start(t, &runtime.ScheduledPipeline{PipelineID: "minutely", Schedule: runtime.MustCron("* * * * *"), Factory: rec.factory(jc)})
		advanceTo(t, fake, d, t0.Add(100*time.Second)) // wall 10:09:10: ran 10:08, 10:09
		jc.jump(-65 * time.Second)                     // wall 10:08:05
		advanceTo(t, fake, d, t0.Add(100*time.Second+175*time.Second))
		_, nums := rec.get()
		base := time.Date(2025, 3, 10, 10, 8, 0, 0, time.UTC).Unix()
		want := []int64{base, base + 60, base + 120, base + 180}
		if !reflect.DeepEqual(nums, want) {
			t.Fatalf("run numbers %v, want %v (each slot once)", nums, want)
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBackwardJumpKeepsEveryIntervalAndNeverRerunsWindow(t *testing.T) {
	forEachModeJump(t, func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, logs *syncBuffer) {
		rec := &wallRecorder{}
		d.start(t, &runtime.ScheduledPipeline{PipelineID: "every", Schedule: runtime.Every(10 * time.Minute), Factory: rec.factory(jc)})
		advanceTo(t, fake, d, t0.Add(4*time.Minute))
		jc.jump(-15 * time.Minute)
		advanceTo(t, fake, d, t0.Add(24*time.Minute))
		walls, nums := rec.get()
		// Attempts come every 10 minutes of elapsed time despite the jump:
		// the one at wall 10:02:30 names window 10:00, which already ran, so
		// it is skipped; the one at wall 10:12:30 runs window 10:10. Without
		// the adjustment the second run would wait until wall 10:17:30.
		window := time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)
		if len(walls) != 2 || nums[0] != window.Unix() || nums[1] != window.Add(10*time.Minute).Unix() {
			t.Fatalf("runs %v %v", walls, nums)
		}
		if want := jc.wall(t0.Add(20 * time.Minute)); walls[1].Sub(want) < 0 || walls[1].Sub(want) > time.Second {
			t.Fatalf("second run at wall %v, want about %v", walls[1], want)
		}
		if !strings.Contains(logs.String(), "slot already completed") {
			t.Fatal("the repeated window was not skipped")
		}
		if pd, ok := d.(*poolDriver); ok {
			if st := pd.status(t, "every"); st.Skipped != 1 || st.Runs != 2 {
				t.Fatalf("status %+v", st)
			}
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// TestForwardJumpDropsAPendingRetry fails the 11:00 slot, so a retry is
// planned for 11:02, and then jumps the clock forward three hours (a
// suspended machine, an NTP step). Later slots came before the retry, so
// the failed slot is dropped like any stale slot: only 14:00 runs.
func TestForwardJumpDropsAPendingRetry(t *testing.T) {
	forEachModeJump(t, func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, logs *syncBuffer) {
		rec := &wallRecorder{}
		var calls atomic.Int32
		record := rec.factory(jc)
		d.start(t, &runtime.ScheduledPipeline{PipelineID: "hourly", Schedule: runtime.MustCron("0 * * * *"), ErrorBackoff: 2 * time.Minute,
			Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				if calls.Add(1) == 1 {
					return nil, errors.New("first run fails")
				}
				return record(ctx)
			}})
		d.settle(t)
		advanceTo(t, fake, d, t0.Add(53*time.Minute)) // 11:00:30: slot 11:00 failed
		if calls.Load() != 1 {
			t.Fatalf("%d attempts by 11:00:30, want the one that failed", calls.Load())
		}
		jc.jump(3 * time.Hour) // the wall clock reads 14:00:30
		advanceTo(t, fake, d, t0.Add(56*time.Minute))
		_, nums := rec.get()
		want := time.Date(2025, 3, 10, 14, 0, 0, 0, time.UTC).Unix()
		if len(nums) != 1 || nums[0] != want {
			t.Fatalf("runs after the jump: slots %v, want only %d (14:00)", nums, want)
		}
	})
}

// TestBackwardJumpShiftsARunEndingAfterItOnce steps the clock back 15
// minutes while an Every(1h) run is in flight, and lets the run end after
// the step. Its next run was planned on the new clock, an hour after it
// ended: the jump must not shift it a second time.
func TestBackwardJumpShiftsARunEndingAfterItOnce(t *testing.T) {
	forEachModeJump(t, func(t *testing.T, fake *clocktest.Fake, jc *jumpClock, d driver, logs *syncBuffer) {
		release := make(chan struct{})
		started := make(chan struct{})
		var mu sync.Mutex
		var walls []time.Time
		var n atomic.Int32
		d.start(t, &runtime.ScheduledPipeline{PipelineID: "e", Schedule: runtime.Every(time.Hour),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					mu.Lock()
					walls = append(walls, jc.Now())
					mu.Unlock()
					if n.Add(1) == 1 {
						close(started)
						<-release
					}
					return nil
				}), nil
			}})
		<-started
		// The run is in flight, so the scheduler cannot settle: give it a
		// moment to see 10:50 before the step back.
		time.Sleep(20 * time.Millisecond)
		fake.Set(time.Date(2025, 3, 10, 10, 50, 0, 0, time.UTC))
		time.Sleep(20 * time.Millisecond)
		jc.jump(-15 * time.Minute) // the wall clock reads 10:35
		close(release)             // the run ends at 10:35; the next is due at 11:35
		advanceTo(t, fake, d, fake.Now().Add(70*time.Minute))
		mu.Lock()
		defer mu.Unlock()
		want := time.Date(2025, 3, 10, 11, 35, 0, 0, time.UTC)
		if len(walls) < 2 || walls[1].Before(want) || walls[1].Sub(want) > time.Second {
			t.Fatalf("runs at %v; want the second at %s, an hour after the first ended", walls, want.Format(time.TimeOnly))
		}
	})
}
