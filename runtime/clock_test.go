package runtime_test

import (
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// clockUnderTest is a Clock with a way to let time pass: sleeping for the
// system clock, Advance for the fake.
type clockUnderTest struct {
	name  string
	clock runtime.Clock
	pass  func(d time.Duration)
}

// The timer contract is checked against both clocks, so code tested with the
// fake behaves the same in production.
func clocksUnderTest() []clockUnderTest {
	fake := clocktest.NewFake(time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC))
	return []clockUnderTest{
		{"system", runtime.SystemClock{}, func(d time.Duration) { time.Sleep(d + 20*time.Millisecond) }},
		{"fake", fake, fake.Advance},
	}
}

const tick = 20 * time.Millisecond

func received(tm runtime.Timer) bool {
	select {
	case <-tm.C():
		return true
	default:
		return false
	}
}

// waitFired waits briefly in real time for a fire: the system timer sends
// from the runtime's timer goroutine, a little after the deadline.
func waitFired(tm runtime.Timer) (time.Time, bool) {
	select {
	case v := <-tm.C():
		return v, true
	case <-time.After(2 * time.Second):
		return time.Time{}, false
	}
}

func TestClockTimerContract(t *testing.T) {
	for _, c := range clocksUnderTest() {
		t.Run(c.name, func(t *testing.T) {
			t.Run("fires once after d, sending about its deadline", func(t *testing.T) {
				start := c.clock.Now()
				tm := c.clock.NewTimer(tick)
				if received(tm) {
					t.Fatal("fired before its deadline")
				}
				c.pass(tick)
				v, ok := waitFired(tm)
				if !ok {
					t.Fatal("did not fire after its deadline")
				}
				if v.Before(start.Add(tick)) {
					t.Errorf("sent %s, before the deadline %s", v, start.Add(tick))
				}
				c.pass(2 * tick)
				if received(tm) {
					t.Error("fired twice")
				}
			})
			t.Run("non-positive d fires at once", func(t *testing.T) {
				for _, d := range []time.Duration{0, -time.Second} {
					if _, ok := waitFired(c.clock.NewTimer(d)); !ok {
						t.Errorf("NewTimer(%s) did not fire", d)
					}
				}
			})
			t.Run("Stop before the deadline", func(t *testing.T) {
				tm := c.clock.NewTimer(tick)
				if !tm.Stop() {
					t.Error("Stop of a pending timer = false")
				}
				c.pass(2 * tick)
				if received(tm) {
					t.Error("a stopped timer fired")
				}
				if tm.Stop() {
					t.Error("second Stop = true")
				}
			})
			t.Run("Stop after firing, value not received", func(t *testing.T) {
				tm := c.clock.NewTimer(tick)
				c.pass(2 * tick)
				if !tm.Stop() {
					t.Error("Stop of a fired, unreceived timer = false")
				}
				if received(tm) {
					t.Error("received a stale value after Stop")
				}
			})
			t.Run("Stop after the value was received", func(t *testing.T) {
				tm := c.clock.NewTimer(tick)
				c.pass(tick)
				if _, ok := waitFired(tm); !ok {
					t.Fatal("did not fire")
				}
				if tm.Stop() {
					t.Error("Stop of a received timer = true")
				}
			})
			t.Run("Reset drops a stale value and re-arms", func(t *testing.T) {
				tm := c.clock.NewTimer(tick)
				c.pass(2 * tick)
				if !tm.Reset(4 * tick) {
					t.Error("Reset of a fired, unreceived timer = false")
				}
				if received(tm) {
					t.Error("received a stale value after Reset")
				}
				c.pass(tick)
				if received(tm) {
					t.Error("fired before the new deadline")
				}
				c.pass(3 * tick)
				if _, ok := waitFired(tm); !ok {
					t.Error("did not fire at the new deadline")
				}
				if tm.Reset(tick) {
					t.Error("Reset of a received timer = true")
				}
				c.pass(tick)
				if _, ok := waitFired(tm); !ok {
					t.Error("did not fire after a Reset of a received timer")
				}
			})
			t.Run("Reset of a stopped timer", func(t *testing.T) {
				tm := c.clock.NewTimer(time.Hour)
				tm.Stop()
				if tm.Reset(tick) {
					t.Error("Reset of a stopped timer = true")
				}
				c.pass(tick)
				if _, ok := waitFired(tm); !ok {
					t.Error("did not fire after Reset")
				}
			})
		})
	}
}

func TestSystemClockNow(t *testing.T) {
	before := time.Now()
	now := runtime.SystemClock{}.Now()
	after := time.Now()
	if now.Before(before) || now.After(after) {
		t.Fatalf("SystemClock.Now() = %s, not between %s and %s", now, before, after)
	}
	if now.Location() != time.Local {
		t.Errorf("SystemClock.Now() is in %s, want time.Local", now.Location())
	}
}
