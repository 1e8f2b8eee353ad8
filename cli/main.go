package cli

import (
	"context"
	"fmt"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
	"io"
	"os"
	"os/signal"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/internal/exitcode"
)

// Exit codes of Main.
const (
	// ExitOK follows success.
	ExitOK = exitcode.OK
	// ExitFailure follows a failed run, an invalid config file or a worker
	// that failed.
	ExitFailure = exitcode.Failure
	// ExitUsage follows an unknown command, flag or missing argument.
	ExitUsage = exitcode.Usage
)

// Option configures Main.
type Option func(*env)

// env is what a command runs with.
type env struct {
	ctx      context.Context
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	registry *etl.Registry
	goTool   string
	lookup   func(string) (string, bool)
}

// WithRegistry makes config files look component types up in r instead of
// Builtins() (config.DefaultRegistry()), so a program can add components
// of its own.
func WithRegistry(r *etl.Registry) Option { return func(e *env) { e.registry = r } }

// WithOutput sets where the commands write (default os.Stdout and
// os.Stderr). Sinks such as stdout still write to the process's stdout.
func WithOutput(stdout, stderr io.Writer) Option {
	return func(e *env) { e.stdout, e.stderr = stdout, stderr }
}

// Main runs the agora command with args (without the program name) and
// returns its exit code.
func Main(args []string, opts ...Option) int {
	e := &env{ctx: context.Background(), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, goTool: "go", lookup: os.LookupEnv}
	for _, opt := range opts {
		opt(e)
	}
	if e.registry == nil {
		e.registry = Builtins()
	}
	if len(args) == 0 {
		usage(e.stderr)
		return ExitUsage
	}
	name, rest := args[0], args[1:]
	cmd, ok := commands()[name]
	if !ok {
		switch name {
		case "help", "-h", "-help", "--help":
			return help(e, rest)
		}
		fmt.Fprintf(e.stderr, "agora: unknown command %q\n\n", name)
		usage(e.stderr)
		return ExitUsage
	}
	return cmd.run(e, rest)
}

// command is one subcommand.
type command struct {
	summary string
	usage   string
	run     func(e *env, args []string) int
}

func commands() map[string]command {
	return map[string]command{
		"worker":  {summary: "run a long-lived worker from an agora/v1 file or an annotated Go package", usage: workerUsage, run: workerCommand},
		"run":     {summary: "run every (or the named) pipeline of an agora/v1 file once, now", usage: runUsage, run: runOnce},
		"check":   {summary: "validate an agora/v1 file without running it", usage: checkUsage, run: check},
		"version": {summary: "print the agora version", usage: versionUsage, run: version},
		"fleet":   {summary: "inspect and steer the fleet: workers, leases, pipelines, pause, resume, trigger", usage: fleet.Usage(), run: fleetCommand},
	}
}

// commandOrder lists the commands in the order help shows them.
var commandOrder = []string{"worker", "run", "check", "fleet", "version"}

func usage(w io.Writer) {
	fmt.Fprint(w, "usage: agora COMMAND [flags]\n\nCommands:\n")
	cmds := commands()
	for _, name := range commandOrder {
		fmt.Fprintf(w, "  %-8s %s\n", name, cmds[name].summary)
	}
	fmt.Fprint(w, "  help     print help for a command (agora help worker)\n\nExit codes: 0 ok, 1 failure or invalid config, 2 usage.\n")
}

func help(e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stdout)
		return ExitOK
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "agora help: unknown command %q\n\n", args[0])
		usage(e.stderr)
		return ExitUsage
	}
	fmt.Fprint(e.stdout, cmd.usage)
	if args[0] == "worker" {
		worker.PrintFlags(e.stdout)
	}
	return ExitOK
}

// signalContext is ctx cancelled by the first SIGINT, SIGTERM or SIGHUP,
// for the commands that do not run a pool (which handles signals itself).
func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, runtime.ShutdownSignals()...)
}
