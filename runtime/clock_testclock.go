//go:build agora_testclock

package runtime

import (
	"fmt"
	"log/slog"
	"os"
	"time"
)

// TestClockOffsetEnv names the variable that shifts the wall clock of a
// binary built with -tags agora_testclock, for fault tests of replicas
// whose clocks disagree: a Go duration (-2s, 1h) added to every
// SystemClock.Now. Timers are unaffected (they count durations).
const TestClockOffsetEnv = "AGORA_TEST_CLOCK_OFFSET"

// testClockBuild says whether this binary was built with -tags
// agora_testclock.
const testClockBuild = true

// testClockOffset is the shift, read once when the binary starts: a value
// that is not a duration stops it there, since running unshifted would
// make the test it was set for prove nothing.
var testClockOffset = func() time.Duration {
	v, ok := os.LookupEnv(TestClockOffsetEnv)
	if !ok || v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		panic(fmt.Sprintf("runtime: %s=%q: not a Go duration (such as -2s or 1h): %v", TestClockOffsetEnv, v, err))
	}
	return d
}()

// wallNow is time.Now shifted by AGORA_TEST_CLOCK_OFFSET.
func wallNow() time.Time { return time.Now().Add(testClockOffset) }

// warnTestClock says, in one WARN line when a pool starts, that this
// binary's clock is shifted and by what.
func warnTestClock(log *slog.Logger) {
	if testClockOffset == 0 {
		return
	}
	log.Warn("runtime: the wall clock is shifted for testing (a binary built with -tags agora_testclock); never run such a binary in production",
		"variable", TestClockOffsetEnv, "offset", testClockOffset.String())
}
