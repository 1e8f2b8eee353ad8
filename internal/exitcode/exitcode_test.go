package exitcode

import (
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
