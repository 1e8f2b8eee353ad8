package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agora-etl/agora/internal/exitcode"
)

// Main builds the pool with getWorker, runs it until it stops and exits
// with the worker entry's statuses: 0 after a clean shutdown, 1 when
// getWorker fails or the pool stops on an error, 130 after a forced second
// interrupt (the pool handles the signals: the first shuts it down
// gracefully, a second now). Main takes no flags and no subcommands: given
// any argument it says so and exits 2. It makes no logger (the pool logs to
// slog.Default unless given WithLogger) and reads no environment: no -help,
// pipelines, run, version or fleet, no tracing from OTEL_*, no notifier
// from AGORA_NOTIFY_URL, and no metrics unless getWorker gave the pool
// some (WithMetrics): its /metrics answers 404.
//
// Deprecated: use worker.Main (package github.com/agora-etl/agora/worker),
// the full entry generated mains call. Main remains, minimal, because the
// design names runtime.Main as the generated worker binary's entry and
// programs outside this repository call it.
func Main(getWorker func() (*WorkerPool, error)) {
	os.Exit(runMain(os.Args[1:], getWorker))
}

// runMain is Main without os.Exit.
func runMain(args []string, getWorker func() (*WorkerPool, error)) int {
	name := filepath.Base(os.Args[0])
	if len(args) > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected arguments %q: runtime.Main takes no flags or subcommands; worker.Main (package github.com/agora-etl/agora/worker) is the full entry\n", name, args)
		return exitcode.Usage
	}
	pool, err := getWorker()
	if err == nil && pool == nil {
		err = errors.New("getWorker returned a nil pool")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return exitcode.Failure
	}
	err = pool.Run(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	}
	return exitcode.OfRun(err, ErrForcedShutdown)
}
