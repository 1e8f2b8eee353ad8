package clocktest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

var start = time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)

func value(tm runtime.Timer) (time.Time, bool) {
	select {
	case v := <-tm.C():
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestAdvanceFiresDueTimersWithTheirDeadlines(t *testing.T) {
	f := clocktest.NewFake(start)
	// Created out of deadline order on purpose.
	durations := []time.Duration{30 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	timers := make([]runtime.Timer, len(durations))
	for i, d := range durations {
		timers[i] = f.NewTimer(d)
	}
	if got := f.Pending(); got != 4 {
		t.Fatalf("Pending() = %d, want 4", got)
	}
	if d, ok := f.NextDeadline(); !ok || !d.Equal(start.Add(10*time.Second)) {
		t.Fatalf("NextDeadline() = %s, %v; want %s", d, ok, start.Add(10*time.Second))
	}

	f.Advance(30 * time.Second)
	if got := f.Now(); !got.Equal(start.Add(30 * time.Second)) {
		t.Fatalf("Now() = %s after Advance(30s)", got)
	}
	for i, d := range durations {
		v, ok := value(timers[i])
		due := d <= 30*time.Second
		if ok != due {
			t.Errorf("timer of %s: fired = %v, want %v", d, ok, due)
		}
		if ok && !v.Equal(start.Add(d)) {
			t.Errorf("timer of %s sent %s, want its deadline %s", d, v, start.Add(d))
		}
	}
	if got := f.Pending(); got != 1 {
		t.Errorf("Pending() = %d after firing three, want 1", got)
	}
	if d, ok := f.NextDeadline(); !ok || !d.Equal(start.Add(40*time.Second)) {
		t.Errorf("NextDeadline() = %s, %v; want %s", d, ok, start.Add(40*time.Second))
	}

	// A timer's deadline counts from the time it is created, the new Now.
	late := f.NewTimer(5 * time.Second)
	f.Advance(5 * time.Second)
	if v, ok := value(late); !ok || !v.Equal(start.Add(35*time.Second)) {
		t.Errorf("timer created after Advance sent %s, %v; want %s", v, ok, start.Add(35*time.Second))
	}
	f.Advance(5 * time.Second)
	if _, ok := value(timers[3]); !ok {
		t.Error("the 40s timer did not fire at 40s")
	}
	if _, ok := f.NextDeadline(); ok || f.Pending() != 0 {
		t.Errorf("timers left pending: %d", f.Pending())
	}
}

func TestSetBackwardsFiresNothing(t *testing.T) {
	f := clocktest.NewFake(start)
	tm := f.NewTimer(time.Minute)

	f.Set(start.Add(-time.Hour))
	if _, ok := value(tm); ok {
		t.Fatal("setting the clock back fired a timer")
	}
	if got := f.Now(); !got.Equal(start.Add(-time.Hour)) {
		t.Fatalf("Now() = %s after Set", got)
	}
	// The deadline is an instant: it is now an hour and a minute away.
	f.Advance(time.Hour)
	if _, ok := value(tm); ok {
		t.Fatal("fired before reaching its deadline instant")
	}
	f.Advance(time.Minute)
	if v, ok := value(tm); !ok || !v.Equal(start.Add(time.Minute)) {
		t.Fatalf("after reaching the deadline: %s, %v", v, ok)
	}
}

func TestSetForwardJumpFiresEverythingDue(t *testing.T) {
	f := clocktest.NewFake(start)
	a, b := f.NewTimer(time.Minute), f.NewTimer(time.Hour)
	c := f.NewTimer(48 * time.Hour)
	f.Set(start.Add(24 * time.Hour))
	for name, tm := range map[string]runtime.Timer{"1m": a, "1h": b} {
		if _, ok := value(tm); !ok {
			t.Errorf("%s timer did not fire on a jump past it", name)
		}
	}
	if _, ok := value(c); ok {
		t.Error("48h timer fired on a 24h jump")
	}
}

func TestStopAndResetOfFakeTimers(t *testing.T) {
	f := clocktest.NewFake(start)
	tm := f.NewTimer(time.Minute)
	if !tm.Stop() || f.Pending() != 0 {
		t.Fatalf("Stop of a pending timer: pending left %d", f.Pending())
	}
	f.Advance(time.Hour)
	if _, ok := value(tm); ok {
		t.Fatal("a stopped timer fired")
	}

	if tm.Reset(time.Minute) {
		t.Error("Reset of a stopped timer = true")
	}
	if !tm.Reset(2 * time.Minute) {
		t.Error("Reset of a pending timer = false")
	}
	if f.Pending() != 1 {
		t.Errorf("Reset twice left %d timers pending, want 1", f.Pending())
	}
	f.Advance(time.Minute)
	if _, ok := value(tm); ok {
		t.Error("fired at the deadline Reset replaced")
	}
	f.Advance(time.Minute)
	if v, ok := value(tm); !ok || !v.Equal(start.Add(time.Hour+2*time.Minute)) {
		t.Errorf("after Reset: %s, %v", v, ok)
	}
}

func TestWaitForTimers(t *testing.T) {
	f := clocktest.NewFake(start)
	if f.WaitForTimers(1, 20*time.Millisecond) {
		t.Fatal("WaitForTimers(1) = true with no timer")
	}
	if !f.WaitForTimers(0, 0) {
		t.Fatal("WaitForTimers(0) = false")
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		f.NewTimer(time.Second)
		f.NewTimer(time.Second)
	}()
	if !f.WaitForTimers(2, 5*time.Second) {
		t.Fatal("WaitForTimers(2) did not see two timers created later")
	}
}

// TestFakeConcurrentUse runs sleepers, advancers and readers at once; run it
// with -race.
func TestFakeConcurrentUse(t *testing.T) {
	f := clocktest.NewFake(start)
	const sleepers = 20
	var wg sync.WaitGroup
	woke := make(chan time.Time, sleepers)
	for i := range sleepers {
		wg.Go(func() {
			tm := f.NewTimer(time.Duration(i+1) * time.Second)
			v := <-tm.C()
			woke <- v
			tm.Stop()
			tm.Reset(time.Second)
			tm.Stop()
		})
	}
	if !f.WaitForTimers(sleepers, 5*time.Second) {
		t.Fatalf("only %d of %d sleepers started", f.Pending(), sleepers)
	}
	var advancers sync.WaitGroup
	for range 4 {
		advancers.Go(func() {
			for range 10 {
				f.Advance(time.Second)
				_ = f.Now()
				_, _ = f.NextDeadline()
			}
		})
	}
	advancers.Wait()
	wg.Wait()
	close(woke)

	if got, want := f.Now(), start.Add(40*time.Second); !got.Equal(want) {
		t.Errorf("after 40 concurrent Advance(1s): Now() = %s, want %s", got, want)
	}
	seen := map[time.Time]bool{}
	for v := range woke {
		seen[v] = true
	}
	for i := range sleepers {
		if d := start.Add(time.Duration(i+1) * time.Second); !seen[d] {
			t.Errorf("no sleeper woke with deadline %s", d)
		}
	}
}
