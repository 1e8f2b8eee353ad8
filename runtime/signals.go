package runtime

import (
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// shutdownSignals are the signals that start a graceful shutdown; a second
// one forces it. SIGHUP is one of them: a closed terminal or an ssh session
// that ends sends it, and a worker killed by it mid-run would keep its
// leases until another worker takes them over.
var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ShutdownSignals returns the signals that start a graceful shutdown of a
// worker (a second one forces it): SIGINT, SIGTERM and SIGHUP.
func ShutdownSignals() []os.Signal { return slices.Clone(shutdownSignals) }

// notifyShutdownSignals delivers the shutdown signals on the returned channel
// until stop is called. The buffer holds two so a quick double Ctrl+C is not
// lost while the first is being handled.
func notifyShutdownSignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, shutdownSignals...)
	return ch, func() { signal.Stop(ch) }
}
