package worker

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/internal/envtrace"
	"github.com/agora-etl/agora/runtime"
)

// Main is the entry point of a worker binary: it runs RunMain with the
// program's arguments and standard error, and exits with its status.
func Main(getWorker func() (*runtime.WorkerPool, error)) {
	os.Exit(RunMain(context.Background(), os.Args[1:], os.Stderr, getWorker))
}

// RunMain is Main without os.Exit: it parses args, logs to stderr (nil:
// os.Stderr) and returns the exit status; subcommands print to os.Stdout.
// Cancelling ctx shuts the pool down gracefully, like SIGINT.
func RunMain(ctx context.Context, args []string, stderr io.Writer, getWorker func() (*runtime.WorkerPool, error)) int {
	return RunMainTo(ctx, args, os.Stdout, stderr, getWorker)
}

// RunMainTo is RunMain with the subcommands' standard output given too (nil:
// os.Stdout).
func RunMainTo(ctx context.Context, args []string, stdout, stderr io.Writer, getWorker func() (*runtime.WorkerPool, error)) int {
	link()
	return runtime.RunMainTo(ctx, args, stdout, stderr, getWorker)
}

var linkOnce sync.Once

// link puts what worker binaries have beyond runtime's entry into it, once.
func link() {
	linkOnce.Do(func() {
		envtrace.Link(otlpFromEnv)
		runtime.RegisterCommand(fleet.Command())
	})
}
