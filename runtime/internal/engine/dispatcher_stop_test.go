package engine

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// stuckClock stands still and its timers never fire: only a wake-up can
// make the dispatcher's loop run another pass.
type stuckClock struct{ t time.Time }

func (c stuckClock) Now() time.Time               { return c.t }
func (c stuckClock) NewTimer(time.Duration) Timer { return stuckTimer{} }

type stuckTimer struct{}

func (stuckTimer) C() <-chan time.Time      { return nil }
func (stuckTimer) Stop() bool               { return true }
func (stuckTimer) Reset(time.Duration) bool { return true }

// TestStopFinishesAHandedBackRunnerWithoutATimer stops runners that are
// handed back but not yet taken into the heap, in both orders: stopped
// before the hand-back, and handed back before the stop. The loop must
// finish them at once; waiting for its next timer would hang a shutdown
// under a clock that does not move.
func TestStopFinishesAHandedBackRunnerWithoutATimer(t *testing.T) {
	for _, stopFirst := range []bool{true, false} {
		clock := stuckClock{t: time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)}
		sp := &Spec{PipelineID: "p", Schedule: mustCron("0 * * * *"), Factory: FactoryFunc(func(context.Context) (Pipeline, error) { return nil, nil })}
		env := testEnv(clock, slog.New(slog.DiscardHandler))
		d := newDispatcher(clock, nil, 1)
		env.d = d
		r := newRunner(sp, env)
		r.begin(clock.t) // next slot 11:00, long after the stuck clock
		go d.loop()
		// The runner is out with an executor, as while a run goes on.
		if !d.sync() {
			t.Fatal("loop ended")
		}
		if stopFirst {
			r.stop()
			d.handBack(r)
		} else {
			d.handBack(r)
			r.stop()
		}
		select {
		case <-d.allDone:
		case <-time.After(2 * time.Second):
			t.Fatalf("stop first %v: the stopped runner was not finished without a timer", stopFirst)
		}
		d.stop()
	}
}
