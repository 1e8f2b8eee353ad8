package worker

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/texttable"
	"github.com/agora-etl/agora/runtime"
)

// versionCommand prints the versions of agora, the binary's module and Go.
func versionCommand(stdout io.Writer) int {
	main := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		main = bi.Main.Path
		if bi.Main.Version != "" {
			main += " " + bi.Main.Version
		}
	}
	fmt.Fprintf(stdout, "agora %s\nbinary %s\ngo %s %s/%s\n", runtime.Version(), main, goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	return ExitOK
}

// pipelinesCommand prints the declared pipelines with their next three fire
// times in UTC and in the local zone.
func pipelinesCommand(pool *runtime.WorkerPool, stdout io.Writer, now time.Time) int {
	t := texttable.New(stdout, "PIPELINE", "SCHEDULE", "NEXT (UTC)", "NEXT (LOCAL)")
	for _, sp := range pool.Pipelines() {
		utc, local := nextFires(sp.Schedule, now, 3)
		t.Row(sp.PipelineID, sp.Schedule.String(), utc, local)
	}
	_ = t.Flush()
	return ExitOK
}

// nextFires formats the next n fire times of a cron schedule; other kinds
// are described in words.
func nextFires(s runtime.Schedule, now time.Time, n int) (utc, local string) {
	switch s.Kind() {
	case runtime.ScheduleEvery:
		return "at start, then " + s.Interval().String() + " after each run", "-"
	case runtime.ScheduleContinuous:
		return "at start, again as each run returns", "-"
	case runtime.ScheduleOnce:
		return "at start, until one run succeeds", "-"
	}
	var u, l []string
	t := now
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		u = append(u, t.UTC().Format("2006-01-02 15:04:05"))
		l = append(l, t.Local().Format("2006-01-02 15:04:05 MST"))
	}
	if len(u) == 0 {
		return "never", "never"
	}
	return strings.Join(u, ", "), strings.Join(l, ", ")
}

// runCommand runs the named pipelines once now. SIGINT, SIGTERM and SIGHUP
// cancel the runs: the pool's own signal handling belongs to Run.
func runCommand(ctx context.Context, pool *runtime.WorkerPool, ids []string) error {
	ctx, stop := signal.NotifyContext(ctx, runtime.ShutdownSignals()...)
	defer stop()
	return pool.RunNow(ctx, ids...)
}

// printHelp writes -help: usage, subcommands, flags, help sections and the
// declared pipelines.
func (e *entry) printHelp(w io.Writer, name string, fs *flag.FlagSet, getWorker func() (*runtime.WorkerPool, error)) {
	fmt.Fprintf(w, "usage: %s [flags] [command [args]]\n\n", name)
	fmt.Fprintf(w, "Runs the worker pool until interrupted (SIGINT, SIGTERM or SIGHUP: graceful shutdown; a second: now).\n\n")
	fmt.Fprintln(w, "Commands:")
	t := texttable.New(w)
	for _, c := range e.allCommands() {
		t.Row("  "+c.Name, c.Summary)
	}
	t.Row("  help", "print this help")
	_ = t.Flush()
	fmt.Fprintln(w, "\nFlags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	e.printHelpSections(w)
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
	t = texttable.New(w)
	for _, sp := range pool.Pipelines() {
		t.Row("  "+sp.PipelineID, sp.Schedule.String())
	}
	_ = t.Flush()
}
