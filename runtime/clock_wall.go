//go:build !agora_testclock

package runtime

import (
	"log/slog"
	"time"
)

// testClockBuild says whether this binary was built with -tags
// agora_testclock.
const testClockBuild = false

// wallNow is the wall clock SystemClock reads. Only a binary built with
// -tags agora_testclock can shift it (clock_testclock.go): in any other,
// AGORA_TEST_CLOCK_OFFSET does nothing.
func wallNow() time.Time { return time.Now() }

// warnTestClock says nothing: this binary's clock is not shifted.
func warnTestClock(*slog.Logger) {}
