package engine

import "time"

// BackoffDelay returns the wait after the failures-th consecutive failed run:
// base, doubled per further failure, never above MaxErrorBackoff. A
// non-positive base means DefaultErrorBackoff.
func BackoffDelay(base time.Duration, failures int) time.Duration {
	if base <= 0 {
		base = DefaultErrorBackoff
	}
	if failures < 1 {
		failures = 1
	}
	if base >= MaxErrorBackoff {
		return MaxErrorBackoff
	}
	d := base
	for i := 1; i < failures; i++ {
		d *= 2
		if d >= MaxErrorBackoff {
			return MaxErrorBackoff
		}
	}
	return d
}

// The error policy's defaults (runtime.DefaultErrorBackoff and
// runtime.MaxErrorBackoff).
const (
	// DefaultErrorBackoff is the first delay after a failed run.
	DefaultErrorBackoff = 60 * time.Second
	// MaxErrorBackoff caps the doubling backoff.
	MaxErrorBackoff = 10 * time.Minute
)
