package runtime

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	goruntime "runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agora-etl/agora/internal/buildinfo"
	"github.com/agora-etl/agora/internal/texttable"
)

// Command is a subcommand of every worker binary: Main runs it, instead of
// the pool, when its name is the first argument after the flags
// ("./worker fleet workers"). Packages register theirs with
// RegisterCommand; package worker, the entry generated mains call,
// registers fleet.Command(), so runtime imports neither fleet nor
// runtime/distributed.
type Command struct {
	// Name is the word that selects the command.
	Name string
	// Summary is its one-line description in -help.
	Summary string
	// Run runs it with the arguments after its name and returns the exit
	// status.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// HelpSection is a block of text -help prints after the subcommands, such
// as the environment variables a package reads.
type HelpSection struct {
	// Title heads the block.
	Title string
	// Body is the block's text, lines indented by the caller.
	Body string
}

var (
	commandsMu sync.Mutex
	commands   = map[string]Command{}
	helps      []HelpSection
)

// builtinCommands are the subcommands Main itself serves.
var builtinCommands = []Command{
	{Name: "pipelines", Summary: "list the declared pipelines, their schedules and next three fire times"},
	{Name: "run", Summary: "run ID... once now, in the foreground, under a lease when coordinated; exit status of the runs"},
	{Name: "version", Summary: "print the agora and Go versions the binary was built with"},
}

// RegisterCommand adds a subcommand to every worker binary. It panics when
// the name is empty, a built-in one, or already registered: a programming
// error found at start-up, as with flag.
func RegisterCommand(c Command) {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	if c.Name == "" || c.Run == nil {
		panic("runtime: RegisterCommand with an empty name or nil Run")
	}
	for _, b := range builtinCommands {
		if b.Name == c.Name {
			panic("runtime: RegisterCommand: " + c.Name + " is a built-in subcommand")
		}
	}
	if _, dup := commands[c.Name]; dup {
		panic("runtime: RegisterCommand: " + c.Name + " registered twice")
	}
	commands[c.Name] = c
}

// RegisterHelp adds a section to every worker binary's -help.
func RegisterHelp(s HelpSection) {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	helps = append(helps, s)
}

func registered(name string) (Command, bool) {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	c, ok := commands[name]
	return c, ok
}

// allCommands lists the built-in then the registered subcommands, sorted.
func allCommands() []Command {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	out := append([]Command(nil), builtinCommands...)
	extra := make([]Command, 0, len(commands))
	for _, c := range commands {
		extra = append(extra, c)
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	return append(out, extra...)
}

func helpSections() []HelpSection {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	return append([]HelpSection(nil), helps...)
}

// Version returns the version of the agora module the binary was built
// with: what `agora version`, a worker's version subcommand, its record in
// Redis and the agora_build_info metric print (see internal/buildinfo for
// how it is worked out: the agora module's version, "(devel)" with the VCS
// revision for a build inside the module itself).
func Version() string { return buildinfo.Version() }

// versionCommand prints the versions of agora, the binary's module and Go.
func versionCommand(stdout io.Writer) int {
	main := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		main = bi.Main.Path
		if bi.Main.Version != "" {
			main += " " + bi.Main.Version
		}
	}
	fmt.Fprintf(stdout, "agora %s\nbinary %s\ngo %s %s/%s\n", Version(), main, goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	return ExitOK
}

// pipelinesCommand prints the declared pipelines with their next three fire
// times in UTC and in the local zone.
func pipelinesCommand(pool *WorkerPool, stdout io.Writer, now time.Time) int {
	pool.mu.Lock()
	pipelines := append([]*ScheduledPipeline(nil), pool.pipelines...)
	pool.mu.Unlock()
	t := texttable.New(stdout, "PIPELINE", "SCHEDULE", "NEXT (UTC)", "NEXT (LOCAL)")
	for _, sp := range pipelines {
		if sp == nil {
			continue
		}
		utc, local := nextFires(sp.Schedule, now, 3)
		t.Row(sp.PipelineID, sp.Schedule.String(), utc, local)
	}
	_ = t.Flush()
	return ExitOK
}

// nextFires formats the next n fire times of a cron schedule; other kinds
// are described in words.
func nextFires(s Schedule, now time.Time, n int) (utc, local string) {
	switch s.Kind() {
	case ScheduleEvery:
		return "at start, then " + s.Interval().String() + " after each run", "-"
	case ScheduleContinuous:
		return "at start, again as each run returns", "-"
	case ScheduleOnce:
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
// cancel the runs.
func runCommand(ctx context.Context, pool *WorkerPool, ids []string) error {
	ctx, stop := signal.NotifyContext(ctx, shutdownSignals...)
	defer stop()
	return pool.RunNow(ctx, ids...)
}
