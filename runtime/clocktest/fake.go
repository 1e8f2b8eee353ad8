// Package clocktest provides a fake runtime.Clock whose time moves only when a
// test says so, so schedules, backoff and lease expiry can be asserted exactly
// and without sleeping.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Fake is a runtime.Clock that stands still until Advance or Set moves it.
// It is safe for concurrent use.
//
// Its timers behave like time.Timer since Go 1.23: a timer sends its
// deadline when it fires, and after Stop or Reset returns no stale value can
// be received; both report true when they stopped a timer that had not fired
// or whose value had not been received.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	changed chan struct{} // closed and replaced whenever timers change
}

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the fake time reaches Now()+d.
func (f *Fake) NewTimer(d time.Duration) runtime.Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{clock: f, c: make(chan time.Time, 1)}
	f.scheduleLocked(t, d)
	return t
}

// Advance moves the fake time forward by d and fires every timer due by then,
// in deadline order. Concurrent calls add up.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(f.now.Add(d))
}

// Set moves the fake time to t (forwards or backwards, like a wall-clock jump)
// and fires every timer due by then. Timers keep their deadlines as instants,
// so setting the time back fires nothing and delays every timer, which the
// monotonic timers of the real clock would not do: tests of clock jumps rely
// on the code under test re-reading Now.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(t)
}

func (f *Fake) setLocked(t time.Time) {
	f.now = t
	sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].when.Before(f.timers[j].when) })
	kept := f.timers[:0]
	fired := false
	for _, timer := range f.timers {
		if !timer.when.After(t) {
			timer.fireLocked()
			fired = true
			continue
		}
		kept = append(kept, timer)
	}
	clear(f.timers[len(kept):])
	f.timers = kept
	if fired {
		f.notifyLocked()
	}
}

// Pending returns how many timers are waiting to fire.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// NextDeadline returns the earliest pending timer deadline, if any.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return time.Time{}, false
	}
	earliest := f.timers[0].when
	for _, t := range f.timers[1:] {
		if t.when.Before(earliest) {
			earliest = t.when
		}
	}
	return earliest, true
}

var _ runtime.Clock = (*Fake)(nil)

// WaitForTimers blocks until at least n timers are pending or timeout passes
// in real time, and reports whether they are. Tests call it to know that the
// code under test has gone to sleep before they move the clock.
func (f *Fake) WaitForTimers(n int, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		if len(f.timers) >= n {
			f.mu.Unlock()
			return true
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

func (f *Fake) scheduleLocked(t *fakeTimer, d time.Duration) {
	t.when = f.now.Add(d)
	if d <= 0 {
		t.fireLocked()
		return
	}
	t.pending = true
	f.timers = append(f.timers, t)
	f.notifyLocked()
}

func (f *Fake) removeLocked(t *fakeTimer) bool {
	for i, other := range f.timers {
		if other == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			f.notifyLocked()
			return true
		}
	}
	return false
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

type fakeTimer struct {
	clock   *Fake
	c       chan time.Time
	when    time.Time
	pending bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	return t.stopLocked()
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.stopLocked()
	t.clock.scheduleLocked(t, d)
	return was
}

// stopLocked unschedules t and drops a value it sent that nobody received,
// reporting whether either was there to stop.
func (t *fakeTimer) stopLocked() bool {
	was := t.pending
	if was {
		t.clock.removeLocked(t)
	}
	t.pending = false
	select {
	case <-t.c:
		was = true
	default:
	}
	return was
}

// fireLocked sends the deadline, as a real timer sends the time it fired. The
// channel holds one value, which Stop and Reset drain, so the send never
// blocks.
func (t *fakeTimer) fireLocked() {
	t.pending = false
	select {
	case t.c <- t.when:
	default:
	}
}
