package cli

import (
	"fmt"
	"os"

	"github.com/agora-etl/agora/internal/gen"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

const workerUsage = `usage: agora worker --config FILE [worker flags]
       agora worker --module PKG [worker flags]

Runs a long-lived worker pool until SIGINT, SIGTERM or SIGHUP: one signal finishes the
runs in flight and exits 0, a second cancels them and exits 130.

  --config FILE  the pipelines of an agora/v1 file (see agora check)
  --module PKG   an annotated Go package (import path or ./dir) whose worker.go
                 is current: agora builds a throwaway main calling
                 worker.Main(PKG.GetWorker) with the local go command (build
                 cache, nothing written to your tree) and runs it. For
                 production, build the binary yourself (go build).

Set AGORA_DISTRIBUTED_REDIS_URL to share leases with the other replicas.

Worker flags, the same as every generated worker binary's:
`

func workerCommand(e *env, args []string) int {
	f, err := splitFlags(args, "config", "module")
	if err != nil {
		return usageError(e, "worker", err)
	}
	if f.help {
		fmt.Fprint(e.stderr, workerUsage)
		worker.PrintFlags(e.stderr)
		return ExitOK
	}
	path, err := f.one("config")
	if err != nil {
		return usageError(e, "worker", err)
	}
	module, err := f.one("module")
	if err != nil {
		return usageError(e, "worker", err)
	}
	switch {
	case path != "" && module != "":
		return usageError(e, "worker", fmt.Errorf("give --config or --module, not both"))
	case module != "":
		return moduleWorker(e, module, f.rest)
	case path == "":
		return usageError(e, "worker", fmt.Errorf("missing --config FILE or --module PKG"))
	}
	file, ok := loadConfig(e, path)
	if !ok {
		return ExitFailure
	}
	defer closeIdleComponents()
	return worker.RunMain(e.ctx, f.rest, e.stderr, func() (*runtime.WorkerPool, error) { return file.Pool() })
}

// moduleWorker builds and runs the worker of an annotated package.
func moduleWorker(e *env, pattern string, workerArgs []string) int {
	ctx, stop := signalContext(e.ctx)
	defer stop()
	pkg, err := findPackage(ctx, e.goTool, pattern)
	if err != nil {
		fmt.Fprintf(e.stderr, "agora worker: %v\n", err)
		return ExitFailure
	}
	if code := checkGenerated(e, pkg); code != ExitOK {
		return code
	}
	dir, err := os.MkdirTemp("", "agora-module-")
	if err != nil {
		fmt.Fprintf(e.stderr, "agora worker: %v\n", err)
		return ExitFailure
	}
	defer os.RemoveAll(dir)
	binary, err := buildModuleWorker(ctx, e.goTool, pkg, dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "agora worker: %v\n", err)
		return ExitFailure
	}
	stop() // from here the worker handles signals; they are forwarded to it
	code, err := runForwarding(binary, workerArgs, e.stdin, e.stdout, e.stderr)
	if err != nil {
		fmt.Fprintf(e.stderr, "agora worker: %v\n", err)
	}
	return code
}

// checkGenerated refuses a package without directives or whose worker.go
// is missing or out of date, exactly as agoragen -check would.
func checkGenerated(e *env, pkg *goPackage) int {
	res, err := gen.Generate(e.ctx, gen.Config{Dir: pkg.Dir, Patterns: []string{"."}})
	if err != nil {
		fmt.Fprintf(e.stderr, "agora worker: %v\n", err)
		return ExitFailure
	}
	if len(res.Diagnostics) > 0 {
		for _, d := range res.Diagnostics {
			fmt.Fprintln(e.stderr, d)
		}
		fmt.Fprintf(e.stderr, "agora worker: %s has errors in its //agora: directives; nothing built\n", pkg.ImportPath)
		return ExitFailure
	}
	if len(res.Files) == 0 {
		fmt.Fprintf(e.stderr, "agora worker: %s has no //agora:schedule directives; nothing to run\n", pkg.ImportPath)
		return ExitFailure
	}
	stale := false
	for _, f := range res.Files {
		if !f.Changed() {
			continue
		}
		stale = true
		old := f.Path
		if !f.Exists {
			old = "/dev/null"
		}
		fmt.Fprint(e.stderr, gen.UnifiedDiff(old, f.Path+" (generated)", f.Old, f.Content))
		fmt.Fprintf(e.stderr, "agora worker: %s is out of date; run go generate in %s\n", f.Path, pkg.Dir)
	}
	if stale {
		return ExitFailure
	}
	return ExitOK
}

func usageError(e *env, name string, err error) int {
	fmt.Fprintf(e.stderr, "agora %s: %v\n\n", name, err)
	fmt.Fprint(e.stderr, commands()[name].usage)
	return ExitUsage
}
