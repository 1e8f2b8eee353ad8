// Command agoragen turns //agora:schedule and //agora:worker directives into
// a typed worker.go whose GetWorker function wires every declared pipeline
// into a runtime.WorkerPool.
//
// Usage:
//
//	agoragen [flags] [packages]
//
// Without packages it generates for the package in the current directory,
// which is what //go:generate go tool agoragen runs. Run agoragen -help for
// the flags and the directive reference.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agora-etl/agora/internal/exitcode"
	"github.com/agora-etl/agora/internal/gen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args and runs the generator; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, code, ok := parseFlags(args, stderr)
	if !ok {
		return code
	}
	opts.Stdout, opts.Stderr = stdout, stderr
	return gen.Run(ctx, opts)
}

// parseFlags turns the command line into options. When ok is false the
// command ends with code (0 after -help).
func parseFlags(args []string, stderr io.Writer) (opts gen.Options, code int, ok bool) {
	fs := flag.NewFlagSet("agoragen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	output := fs.String("o", gen.DefaultOutput, "`file` name written in each package's directory")
	check := fs.Bool("check", false, "write nothing; exit 1 and print a diff when a generated file is missing or out of date")
	diff := fs.Bool("diff", false, "write nothing; print a diff of what would change")
	mainFlag := fs.Bool("main", false, "also generate func main() calling worker.Main(GetWorker), like //agora:worker main")
	tags := fs.String("tags", "", "comma-separated build `tags` to load packages with")
	verbose := fs.Bool("v", false, "say what is written and which packages have no directives")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: agoragen [flags] [packages]\n\n")
		fmt.Fprintf(stderr, "agoragen generates %s (GetWorker and pipeline id constants) for every package\n", gen.DefaultOutput)
		fmt.Fprintf(stderr, "with //agora: directives; packages default to the current directory.\n")
		fmt.Fprintf(stderr, "Exit codes: 0 ok, 1 errors in the code (or -check found a difference), 2 usage or load failure.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nDirectives:\n\n")
		gen.WriteReference(stderr)
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return opts, exitcode.OK, false
		}
		return opts, exitcode.Usage, false
	}
	if *check && *diff {
		fmt.Fprintln(stderr, "agoragen: -check and -diff cannot be combined")
		return opts, exitcode.Usage, false
	}
	opts.Mode = gen.Write
	switch {
	case *check:
		opts.Mode = gen.Check
	case *diff:
		opts.Mode = gen.Diff
	}
	opts.Config = gen.Config{Patterns: fs.Args(), Output: *output, Main: *mainFlag, Tags: *tags}
	opts.Verbose = *verbose
	return opts, exitcode.OK, true
}
