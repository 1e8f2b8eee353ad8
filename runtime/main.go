package runtime

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
)

// Exit statuses of Main.
const (
	// ExitOK follows a clean shutdown.
	ExitOK = 0
	// ExitFailure follows a terminal pipeline error, runs cancelled by the
	// graceful timeout, or bad configuration (flags, getWorker's error,
	// validation).
	ExitFailure = 1
	// ExitInterrupted follows a forced shutdown by a second interrupt
	// (128 + SIGINT).
	ExitInterrupted = 130
)

// Main is the entry point of a worker binary: it parses flags, builds the pool
// with getWorker, runs it and exits with 0 on a clean shutdown, 1 on a
// terminal pipeline error or bad configuration, and 130 after a forced second
// interrupt. See RunMain for the flags.
func Main(getWorker func() (*WorkerPool, error)) {
	os.Exit(RunMain(context.Background(), os.Args[1:], os.Stderr, getWorker))
}

// RunMain is Main without os.Exit: it parses args, logs to stderr and returns
// the exit status. Flags:
//
//	-health-port N     serve /healthz, /readyz and /status on port N
//	                   (0: a free port; default: as the pool was built)
//	-log-format F      text (default) or json
//	-log-level L       debug, info (default), warn or error
//
// The logger built from the flags becomes slog.Default before getWorker is
// called and is the pool's logger unless getWorker set one with WithLogger.
// When the pool has no tracer provider and OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, runs are traced over OTLP/HTTP
// as the OTEL_* variables say, with service.name from OTEL_SERVICE_NAME or
// else the program's name; the pool flushes and shuts that provider down
// as Run returns.
// Cancelling ctx shuts the pool down gracefully, like SIGINT. A nil stderr
// means os.Stderr.
func RunMain(ctx context.Context, args []string, stderr io.Writer, getWorker func() (*WorkerPool, error)) int {
	if stderr == nil {
		stderr = os.Stderr
	}
	name := filepath.Base(os.Args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	healthPort := fs.String("health-port", "", "serve /healthz, /readyz and /status on this port (0: any free port; default: as configured)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitFailure
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", name, fs.Args())
		fs.Usage()
		return ExitFailure
	}
	logger, err := NewLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	var portOpt PoolOption
	if *healthPort != "" {
		port, err := strconv.Atoi(*healthPort)
		if err != nil || port < 0 || port > 65535 {
			fmt.Fprintf(stderr, "%s: -health-port %q: want a port number 0-65535\n", name, *healthPort)
			return ExitFailure
		}
		portOpt = WithHealthPort(port)
	}

	// slog.SetDefault also points the log package at the new handler; the
	// default handler put back does not undo that, so the log package's
	// own output and flags are restored too.
	previous, logOut, logFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(logger)
	defer func() {
		slog.SetDefault(previous)
		log.SetOutput(logOut)
		log.SetFlags(logFlags)
	}()

	if getWorker == nil {
		logger.Error("no worker: getWorker is nil")
		return ExitFailure
	}
	pool, err := getWorker()
	if err != nil {
		logger.Error("cannot build the worker", slog.Any("error", err))
		return ExitFailure
	}
	if pool == nil {
		logger.Error("cannot build the worker: getWorker returned a nil pool")
		return ExitFailure
	}
	if portOpt != nil {
		portOpt(&pool.cfg)
	}
	if pool.cfg.logger == nil {
		pool.cfg.logger = logger
	}
	if err := traceFromEnv(ctx, pool, logger); err != nil {
		logger.Error("cannot set up tracing", slog.Any("error", err))
		return ExitFailure
	}

	err = pool.Run(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	if errors.Is(err, ErrForcedShutdown) {
		code = ExitInterrupted
	}
	logger.Error("worker failed", slog.Any("error", err), slog.Int("exit_code", code))
	return code
}
