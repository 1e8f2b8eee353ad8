// Package exitcode holds the exit statuses every agora command shares: the
// agora command, a worker binary (worker.Main), the fleet commands and
// agoragen. They are part of the command-line contract: scripts and tests
// outside the repository depend on them.
package exitcode

import "errors"

const (
	// OK follows success: the command did what it was asked, or a worker
	// shut down cleanly.
	OK = 0
	// Failure follows a failed run, an invalid configuration (a config
	// file, settings, a worker that cannot be built), Redis unreachable, or
	// code agoragen rejects.
	Failure = 1
	// Usage follows a wrong command line: an unknown command or flag, a
	// missing or extra argument.
	Usage = 2
	// Interrupted follows a forced shutdown by a second interrupt
	// (128 + SIGINT).
	Interrupted = 130
)

// OfRun is the exit status of a worker whose pool's Run returned err: OK
// when err is nil, Interrupted when err wraps forced (the pool's sentinel
// for a shutdown forced by a second interrupt, runtime.ErrForcedShutdown),
// Failure otherwise. runtime.Main and package worker's entry both exit
// with it; forced is a parameter because runtime imports this package.
func OfRun(err, forced error) int {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, forced):
		return Interrupted
	default:
		return Failure
	}
}
