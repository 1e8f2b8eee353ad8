package humanize

import (
	"testing"
	"time"
)

func TestRunDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{400 * time.Nanosecond, "0s"},
		{73 * time.Microsecond, "73µs"},
		{73400 * time.Nanosecond, "73µs"},
		{999 * time.Microsecond, "999µs"},
		{1500 * time.Microsecond, "2ms"},
		{1234 * time.Millisecond, "1.234s"},
		{90*time.Second + 400*time.Microsecond, "1m30s"},
	} {
		if got := RunDuration(tt.d); got != tt.want {
			t.Errorf("RunDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
