package runtime

import "time"

// Clock is the source of time for schedules, backoff and leases. Production
// code uses SystemClock; tests inject clocktest.Fake to move time by hand.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer that agora uses, so fake clocks can
// provide their own.
type Timer interface {
	// C returns the channel the timer fires on.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was pending.
	Stop() bool
	// Reset makes the timer fire after d; it reports whether it was pending.
	Reset(d time.Duration) bool
}

// SystemClock is the real wall and monotonic clock.
type SystemClock struct{}

// Now returns time.Now() (shifted by AGORA_TEST_CLOCK_OFFSET in a binary
// built with -tags agora_testclock; see clock_testclock.go).
func (SystemClock) Now() time.Time { return wallNow() }

// NewTimer wraps time.NewTimer.
func (SystemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (s systemTimer) C() <-chan time.Time        { return s.t.C }
func (s systemTimer) Stop() bool                 { return s.t.Stop() }
func (s systemTimer) Reset(d time.Duration) bool { return s.t.Reset(d) }
