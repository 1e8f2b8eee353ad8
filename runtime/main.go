package runtime

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
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/exitcode"
	"github.com/agora-etl/agora/internal/slogdefault"
	"github.com/agora-etl/agora/internal/texttable"
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

// Main is the entry point of a worker binary: it parses flags, builds the pool
// with getWorker, runs it and exits with 0 on a clean shutdown, 1 on a
// terminal pipeline error or bad configuration, and 130 after a forced second
// interrupt. See RunMain for the flags.
//
// Deprecated: call worker.Main (package github.com/agora-etl/agora/worker):
// it is Main with the OTLP exporter and the fleet subcommand linked in,
// which runtime leaves out to stay light. Main alone runs the pool and its
// other subcommands unchanged.
func Main(getWorker func() (*WorkerPool, error)) {
	os.Exit(RunMain(context.Background(), os.Args[1:], os.Stderr, getWorker))
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
// succeeded), "version" prints the versions built in, "help" prints the
// help, and commands other packages registered with RegisterCommand run
// with the arguments after their name ("fleet", from package worker).
// -help lists the flags, the subcommands, the sections registered with
// RegisterHelp (the AGORA_DISTRIBUTED_* variables) and the declared
// pipelines.
//
// The logger built from the flags becomes slog.Default before getWorker is
// called and is the pool's logger unless getWorker set one with WithLogger.
// When the pool has no tracer provider and OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, runs are traced over OTLP/HTTP
// as the OTEL_* variables say, with service.name from OTEL_SERVICE_NAME or
// else the program's name; the pool flushes and shuts that provider down
// as Run returns. The exporter is linked by package worker, whose RunMain
// is this function with it: a program that calls runtime's entry without
// linking it logs a warning instead of tracing.
// Cancelling ctx shuts the pool down gracefully, like SIGINT. A nil stderr
// means os.Stderr.
func RunMain(ctx context.Context, args []string, stderr io.Writer, getWorker func() (*WorkerPool, error)) int {
	return RunMainTo(ctx, args, os.Stdout, stderr, getWorker)
}

// RunMainTo is RunMain with the subcommands' standard output given too. A
// nil stdout means os.Stdout.
func RunMainTo(ctx context.Context, args []string, stdout, stderr io.Writer, getWorker func() (*WorkerPool, error)) int {
	if stderr == nil {
		stderr = os.Stderr
	}
	if stdout == nil {
		stdout = os.Stdout
	}
	name := filepath.Base(os.Args[0])
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	healthPort, healthAddr, logFormat, logLevel := defineWorkerFlags(fs)
	fs.Usage = func() { printHelp(stderr, name, fs, getWorker) }
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
			printHelp(stdout, name, fs, getWorker)
			return ExitOK
		case "version":
			return versionCommand(stdout)
		case "pipelines", "run":
		default:
			if _, ok := registered(sub); !ok {
				if sub == "fleet" {
					// The one registered command a program can miss: it
					// comes with package worker, which runtime.Main lacks.
					fmt.Fprintf(stderr, "%s: no fleet subcommand: this program calls runtime.Main; call worker.Main (github.com/agora-etl/agora/worker), which links it\n", name)
					return ExitFailure
				}
				fmt.Fprintf(stderr, "%s: unexpected arguments %q: %q is not a subcommand (%s)\n", name, fs.Args(), sub, commandNames())
				return ExitFailure
			}
		}
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
	var addrHost, addrPort string
	if *healthAddr != "" {
		var err error
		addrHost, addrPort, err = splitHealthAddr(*healthAddr)
		if err != nil {
			fmt.Fprintf(stderr, "%s: -health-addr %q: %v\n", name, *healthAddr, err)
			return ExitFailure
		}
		if addrPort != "" && *healthPort != "" {
			fmt.Fprintf(stderr, "%s: -health-addr %q names a port and -health-port %s another; give the port once\n", name, *healthAddr, *healthPort)
			return ExitFailure
		}
	}

	defer slogdefault.Use(logger)()

	if c, ok := registered(sub); ok {
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
	if portOpt != nil {
		portOpt(&pool.cfg)
	}
	if *healthAddr != "" {
		port := addrPort
		if port == "" {
			if !pool.cfg.healthEnabled {
				logger.Error("-health-addr names no port and neither -health-port nor the pool gives one", slog.String("health_addr", *healthAddr))
				return ExitFailure
			}
			_, port, _ = net.SplitHostPort(pool.cfg.healthAddr)
		}
		WithHealthAddr(net.JoinHostPort(addrHost, port))(&pool.cfg)
	}
	if pool.cfg.logger == nil {
		pool.cfg.logger = logger
	}
	if err := traceFromEnv(ctx, pool, logger); err != nil {
		logger.Error("cannot set up tracing", slog.Any("error", err))
		return ExitFailure
	}
	if err := notifyFromEnv(pool, logger); err != nil {
		logger.Error("cannot set up notifications", slog.Any("error", err))
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
		return "", "", fmt.Errorf("want host:port or a host")
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

// commandNames lists every subcommand for error messages.
func commandNames() string {
	var names []string
	for _, c := range allCommands() {
		names = append(names, c.Name)
	}
	return "subcommands: " + strings.Join(append(names, "help"), ", ")
}

// defineWorkerFlags defines the flags of every worker binary on fs.
func defineWorkerFlags(fs *flag.FlagSet) (healthPort, healthAddr, logFormat, logLevel *string) {
	healthPort = fs.String("health-port", "", "serve /healthz, /readyz, /status and /metrics on this port (0: any free port; default: as configured)")
	healthAddr = fs.String("health-addr", "", "listen for the health endpoints on this host:port, or this host with the port of -health-port or the pool (e.g. 127.0.0.1 or a pod IP)")
	logFormat = fs.String("log-format", "text", "log format: text or json")
	logLevel = fs.String("log-level", "info", "log level: debug, info, warn or error")
	return
}

// PrintWorkerFlags writes the flags every worker binary takes and the
// registered help sections (the AGORA_DISTRIBUTED_* variables), for a
// command that runs a worker and documents its flags in its own help.
func PrintWorkerFlags(w io.Writer) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	defineWorkerFlags(fs)
	fs.SetOutput(w)
	fs.PrintDefaults()
	printHelpSections(w)
}

// printHelpSections writes the registered help sections.
func printHelpSections(w io.Writer) {
	for _, h := range helpSections() {
		fmt.Fprintf(w, "\n%s:\n%s", h.Title, h.Body)
		if !strings.HasSuffix(h.Body, "\n") {
			fmt.Fprintln(w)
		}
	}
}

// printHelp writes -help: usage, subcommands, flags, registered sections
// and the declared pipelines.
func printHelp(w io.Writer, name string, fs *flag.FlagSet, getWorker func() (*WorkerPool, error)) {
	fmt.Fprintf(w, "usage: %s [flags] [command [args]]\n\n", name)
	fmt.Fprintf(w, "Runs the worker pool until interrupted (SIGINT, SIGTERM or SIGHUP: graceful shutdown; a second: now).\n\n")
	fmt.Fprintln(w, "Commands:")
	t := texttable.New(w)
	for _, c := range allCommands() {
		t.Row("  "+c.Name, c.Summary)
	}
	t.Row("  help", "print this help")
	_ = t.Flush()
	fmt.Fprintln(w, "\nFlags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	printHelpSections(w)
	fmt.Fprintln(w, "\nPipelines:")
	if getWorker == nil {
		fmt.Fprintln(w, "  (none: no worker)")
		return
	}
	pool, err := getWorker()
	if err != nil || pool == nil {
		fmt.Fprintf(w, "  (cannot build the worker to list them: %v)\n", err)
		return
	}
	pool.mu.Lock()
	pipelines := append([]*ScheduledPipeline(nil), pool.pipelines...)
	pool.mu.Unlock()
	t = texttable.New(w)
	for _, sp := range pipelines {
		if sp != nil {
			t.Row("  "+sp.PipelineID, sp.Schedule.String())
		}
	}
	_ = t.Flush()
}
