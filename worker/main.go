package worker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agora-etl/agora/internal/exitcode"
	"github.com/agora-etl/agora/internal/slogdefault"
	"github.com/agora-etl/agora/runtime"
)

// Exit statuses of Main.
const (
	// ExitOK follows a clean shutdown.
	ExitOK = exitcode.OK
	// ExitFailure follows a terminal pipeline error, runs cancelled by the
	// graceful timeout, or bad configuration (flags, getWorker's error,
	// validation).
	ExitFailure = exitcode.Failure
	// ExitUsage follows a subcommand given the wrong arguments.
	ExitUsage = exitcode.Usage
	// ExitInterrupted follows a forced shutdown by a second interrupt
	// (128 + SIGINT).
	ExitInterrupted = exitcode.Interrupted
)

// Main is the entry point of a worker binary: it runs RunMain with the
// program's arguments and standard error, and exits with its status.
func Main(getWorker func() (*runtime.WorkerPool, error), opts ...Option) {
	os.Exit(RunMain(context.Background(), os.Args[1:], os.Stderr, getWorker, opts...))
}

// RunMain is Main without os.Exit: it parses args, logs to stderr and returns
// the exit status; subcommands print to os.Stdout (RunMainTo takes both
// writers). Flags:
//
//	-health-port N     serve /healthz, /readyz, /status and /metrics on
//	                   port N (0: a free port; default: as the pool was built)
//	-health-addr A     listen on A: "host:port", or a host (loopback, a pod
//	                   IP) with the port from -health-port or the pool
//	-log-format F      text (default) or json
//	-log-level L       debug, info (default), warn or error
//
// A first argument after the flags selects a subcommand instead of running
// the pool: "pipelines" lists the declared pipelines with their next three
// fire times in UTC and local time, "run ID..." runs those pipelines once
// now in the foreground (WorkerPool.RunNow; exit status 0 only if every run
// succeeded), "version" prints the versions built in, "fleet" inspects and
// steers the fleet (package fleet), "help" prints the help, and commands
// given with WithCommand run with the arguments after their name. -help
// lists the flags, the subcommands, the environment runtime/distributed
// reads, the sections given with WithHelp and the declared pipelines.
//
// The logger built from the flags (NewLogger) becomes slog.Default while
// RunMain runs, before getWorker is called, so it is the pool's logger
// unless getWorker set one with runtime.WithLogger. When the pool has no
// tracer provider and OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, runs are traced over OTLP/HTTP
// as the OTEL_* variables say, with service.name from OTEL_SERVICE_NAME or
// else the program's name; the pool flushes and shuts that provider down
// as Run returns. When the pool has no notifier and AGORA_NOTIFY_URL is
// set, it notifies that webhook. Cancelling ctx shuts the pool down
// gracefully, like SIGINT. A nil stderr means os.Stderr.
func RunMain(ctx context.Context, args []string, stderr io.Writer, getWorker func() (*runtime.WorkerPool, error), opts ...Option) int {
	return RunMainTo(ctx, args, os.Stdout, stderr, getWorker, opts...)
}

// RunMainTo is RunMain with the subcommands' standard output given too. A
// nil stdout means os.Stdout.
func RunMainTo(ctx context.Context, args []string, stdout, stderr io.Writer, getWorker func() (*runtime.WorkerPool, error), opts ...Option) int {
	if stderr == nil {
		stderr = os.Stderr
	}
	if stdout == nil {
		stdout = os.Stdout
	}
	name := filepath.Base(os.Args[0])
	e, err := newEntry(opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fl := defineFlags(fs)
	fs.Usage = func() { e.printHelp(stderr, name, fs, getWorker) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitFailure
	}
	sub, subArgs := "", []string(nil)
	if fs.NArg() > 0 {
		sub, subArgs = fs.Arg(0), fs.Args()[1:]
		switch sub {
		case "help":
			e.printHelp(stdout, name, fs, getWorker)
			return ExitOK
		case "version":
			return versionCommand(stdout)
		case "pipelines", "run":
		default:
			if _, ok := e.commands[sub]; !ok {
				fmt.Fprintf(stderr, "%s: unexpected arguments %q: %q is not a subcommand (%s)\n", name, fs.Args(), sub, e.commandNames())
				return ExitFailure
			}
		}
	}
	logger, err := NewLogger(stderr, *fl.logFormat, *fl.logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	poolOpts, err := fl.poolOptions()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}

	// Packages that log through slog.Default (the coordinator, the Redis
	// client, SQL sinks) then log as the flags say.
	defer slogdefault.Use(logger)()

	if c, ok := e.commands[sub]; ok {
		return c.Run(ctx, subArgs, stdout, stderr)
	}
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
	if err := pool.Configure(poolOpts...); err != nil {
		logger.Error("cannot configure the worker", slog.Any("error", err))
		return ExitFailure
	}
	if err := serveMetrics(pool, e.collectors); err != nil {
		logger.Error("cannot configure the worker's metrics", slog.Any("error", err))
		return ExitFailure
	}
	if err := traceFromEnv(ctx, pool, logger); err != nil {
		logger.Error("cannot set up tracing", slog.Any("error", err))
		return ExitFailure
	}
	if err := notifyFromEnv(pool, logger); err != nil {
		logger.Error("cannot set up notifications", slog.Any("error", err))
		return ExitFailure
	}
	if err := keepRunHistory(pool); err != nil {
		logger.Error("cannot configure the worker", slog.Any("error", err))
		return ExitFailure
	}

	switch sub {
	case "pipelines":
		return pipelinesCommand(pool, stdout, time.Now())
	case "run":
		if len(subArgs) == 0 {
			fmt.Fprintf(stderr, "%s run: name the pipelines to run (%s pipelines lists them)\n", name, name)
			return ExitUsage
		}
		if err := runCommand(ctx, pool, subArgs); err != nil {
			logger.Error("run failed", slog.Any("error", err))
			return ExitFailure
		}
		return ExitOK
	}

	err = pool.Run(ctx)
	code := exitcode.OfRun(err, runtime.ErrForcedShutdown)
	if err != nil {
		logger.Error("worker failed", slog.Any("error", err), slog.Int("exit_code", code))
	}
	return code
}

// flags are the flags of every worker binary.
type flags struct {
	healthPort, healthAddr, logFormat, logLevel *string
}

// defineFlags defines the flags of every worker binary on fs.
func defineFlags(fs *flag.FlagSet) flags {
	return flags{
		healthPort: fs.String("health-port", "", "serve /healthz, /readyz, /status and /metrics on this port (0: any free port; default: as configured)"),
		healthAddr: fs.String("health-addr", "", "listen for the health endpoints on this host:port, or this host with the port of -health-port or the pool (e.g. 127.0.0.1 or a pod IP)"),
		logFormat:  fs.String("log-format", "text", "log format: text or json"),
		logLevel:   fs.String("log-level", "info", "log level: debug, info, warn or error"),
	}
}

// poolOptions turns -health-port and -health-addr into options that
// override the pool's own health settings.
func (f flags) poolOptions() ([]runtime.PoolOption, error) {
	var opts []runtime.PoolOption
	if *f.healthPort != "" {
		port, err := strconv.Atoi(*f.healthPort)
		if err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("-health-port %q: want a port number 0-65535", *f.healthPort)
		}
		opts = append(opts, runtime.WithHealthPort(port))
	}
	if *f.healthAddr == "" {
		return opts, nil
	}
	host, port, err := splitHealthAddr(*f.healthAddr)
	if err != nil {
		return nil, fmt.Errorf("-health-addr %q: %w", *f.healthAddr, err)
	}
	switch {
	case port != "" && *f.healthPort != "":
		return nil, fmt.Errorf("-health-addr %q names a port and -health-port %s another; give the port once", *f.healthAddr, *f.healthPort)
	case port != "":
		opts = append(opts, runtime.WithHealthAddr(net.JoinHostPort(host, port)))
	default:
		// The port comes from -health-port, applied just before, or the pool.
		opts = append(opts, runtime.WithHealthHost(host))
	}
	return opts, nil
}

// PrintFlags writes the flags every worker binary takes and the environment
// help sections (the AGORA_DISTRIBUTED_* variables, and those given with
// WithHelp), for a command that runs a worker and documents its flags in
// its own help (agora worker --config).
func PrintFlags(w io.Writer, opts ...Option) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	defineFlags(fs)
	fs.SetOutput(w)
	fs.PrintDefaults()
	// The options' errors concern commands, which are not printed here.
	e, _ := newEntry(opts)
	e.printHelpSections(w)
}

// splitHealthAddr splits -health-addr into a host and a port, the port
// empty when only a host is given.
func splitHealthAddr(addr string) (host, port string, err error) {
	if h, p, err := net.SplitHostPort(addr); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			return "", "", fmt.Errorf("port %q: want a number 0-65535", p)
		}
		return h, p, nil
	}
	host = addr
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	if net.ParseIP(host) == nil && !validHostName(host) {
		return "", "", errors.New("want host:port or a host")
	}
	return host, "", nil
}

// validHostName accepts DNS-style names such as localhost.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, c := range h {
		if !(c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
