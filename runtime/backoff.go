package runtime

import "time"

// backoffDelay returns the wait after the failures-th consecutive failed run:
// base, doubled per further failure, never above MaxErrorBackoff. A
// non-positive base means DefaultErrorBackoff.
func backoffDelay(base time.Duration, failures int) time.Duration {
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
