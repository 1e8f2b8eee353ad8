// Package humanize formats values for the fleet's tables and pages.
package humanize

import "time"

// RunDuration formats a run's duration short but never as "0s": to the
// millisecond from 1 ms up, to the microsecond below, so that a run of
// 73 µs reads 73µs rather than nothing at all.
func RunDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}
