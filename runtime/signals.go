package runtime

import (
	"os"
	"os/signal"
	"syscall"
)

// shutdownSignals are the signals that start a graceful shutdown; a second
// one forces it.
var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// notifyShutdownSignals delivers SIGINT and SIGTERM on the returned channel
// until stop is called. The buffer holds two so a quick double Ctrl+C is not
// lost while the first is being handled.
func notifyShutdownSignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, shutdownSignals...)
	return ch, func() { signal.Stop(ch) }
}
