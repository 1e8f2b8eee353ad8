package exitcode

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// The values are the contract: 0 ok, 1 failure or invalid config, 2 usage,
// 130 forced interrupt.
func TestContract(t *testing.T) {
	for name, tc := range map[string]struct{ got, want int }{
		"OK":          {OK, 0},
		"Failure":     {Failure, 1},
		"Usage":       {Usage, 2},
		"Interrupted": {Interrupted, 128 + int(syscall.SIGINT)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", name, tc.got, tc.want)
		}
	}
}

// OfRun: nil is OK, an error wrapping the forced sentinel (joined or not)
// is Interrupted, any other error is Failure.
func TestOfRun(t *testing.T) {
	forced := errors.New("forced shutdown")
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, OK},
		{errors.New("boom"), Failure},
		{forced, Interrupted},
		{fmt.Errorf("cancelled runs of [p]; %w: a signal abandoned them", forced), Interrupted},
		{errors.Join(errors.New("boom"), forced), Interrupted},
	} {
		if got := OfRun(tc.err, forced); got != tc.want {
			t.Errorf("OfRun(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
