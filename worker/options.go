package worker

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/runtime/distributed"
)

// Command is a subcommand of a worker binary: RunMain runs it, instead of
// the pool, when its name is the first argument after the flags
// ("./worker fleet workers"). Give one with WithCommand.
type Command struct {
	// Name is the word that selects the command.
	Name string
	// Summary is its one-line description in -help.
	Summary string
	// Run runs it with the arguments after its name and returns the exit
	// status.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// HelpSection is a block of text -help prints after the flags, such as the
// environment variables a package reads. Give one with WithHelp.
type HelpSection struct {
	// Title heads the block.
	Title string
	// Body is the block's text, lines indented by the caller.
	Body string
}

// Option adds to what Main, RunMain and RunMainTo serve.
type Option func(*entry)

// WithCommand adds a subcommand. Its name must not be empty, nor one of
// the worker's own (pipelines, run, version, fleet, help), nor given twice:
// RunMain then fails with ExitFailure before doing anything else.
func WithCommand(c Command) Option {
	return func(e *entry) { e.extra = append(e.extra, c) }
}

// WithHelp adds a section to -help, after the flags and the environment
// of runtime/distributed.
func WithHelp(s HelpSection) Option {
	return func(e *entry) { e.helps = append(e.helps, s) }
}

// WithCollectors adds collectors to the /metrics of the pool getWorker
// builds (metrics.WithCollectors, package runtime/metrics), for metrics
// that belong to the process or to a package rather than to the pool,
// such as etl.SinkCollector and fencing.RefusalCollector for pipelines
// built with package etl. A pool whose code gave it metrics of another
// kind than runtime/metrics' serves those alone.
func WithCollectors(cs ...prometheus.Collector) Option {
	return func(e *entry) { e.collectors = append(e.collectors, cs...) }
}

// entry is what one RunMain serves beyond the pool: its subcommands, help
// sections and collectors.
type entry struct {
	extra      []Command
	commands   map[string]Command // the fleet command and extra, by name
	helps      []HelpSection
	collectors []prometheus.Collector
}

// builtinCommands are the subcommands RunMain serves itself.
var builtinCommands = []Command{
	{Name: "pipelines", Summary: "list the declared pipelines, their schedules and next three fire times"},
	{Name: "run", Summary: "run ID... once now, in the foreground, under a lease when coordinated; exit status of the runs"},
	{Name: "version", Summary: "print the agora and Go versions the binary was built with"},
}

// newEntry applies opts over what every worker binary has: the fleet
// subcommand and the AGORA_DISTRIBUTED_* help, which generated workers use
// through runtime/distributed. On a bad command it returns the entry built
// so far too, whose help sections PrintFlags still prints.
func newEntry(opts []Option) (*entry, error) {
	e := &entry{
		commands: map[string]Command{},
		helps:    []HelpSection{{Title: "Environment (runtime/distributed)", Body: distributed.EnvHelp()}},
	}
	for _, opt := range opts {
		if opt != nil {
			opt(e)
		}
	}
	fleetCommand := Command{Name: "fleet", Summary: fleet.Summary, Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return fleet.Run(ctx, args, stdout, stderr)
	}}
	taken := map[string]bool{"help": true}
	for _, b := range builtinCommands {
		taken[b.Name] = true
	}
	for _, c := range append([]Command{fleetCommand}, e.extra...) {
		switch {
		case c.Name == "" || c.Run == nil:
			return e, fmt.Errorf("worker: WithCommand(%q): a command needs a name and a Run", c.Name)
		case taken[c.Name]:
			return e, fmt.Errorf("worker: WithCommand(%q): the worker has a %s subcommand already", c.Name, c.Name)
		}
		taken[c.Name] = true
		e.commands[c.Name] = c
	}
	return e, nil
}

// allCommands lists the built-in then the other subcommands, sorted.
func (e *entry) allCommands() []Command {
	extra := make([]Command, 0, len(e.commands))
	for _, c := range e.commands {
		extra = append(extra, c)
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	return append(append([]Command(nil), builtinCommands...), extra...)
}

// commandNames lists every subcommand for error messages.
func (e *entry) commandNames() string {
	var names []string
	for _, c := range e.allCommands() {
		names = append(names, c.Name)
	}
	return "subcommands: " + strings.Join(append(names, "help"), ", ")
}

// printHelpSections writes the help sections.
func (e *entry) printHelpSections(w io.Writer) {
	for _, h := range e.helps {
		fmt.Fprintf(w, "\n%s:\n%s", h.Title, h.Body)
		if !strings.HasSuffix(h.Body, "\n") {
			fmt.Fprintln(w)
		}
	}
}
