// Package fleet is the operator's view of a fleet of agora workers: who is
// alive, who holds which lease, what each pipeline did last and does next,
// and the fleet-wide commands pause, resume and trigger.
//
// Run is the one entry point; the agora command serves it as "agora fleet"
// and every worker binary as "./worker fleet" (runtime/distributed
// registers both the Redis backend and the worker subcommand when it is
// linked in, which every generated worker.go does). It reads the same
// AGORA_DISTRIBUTED_* settings as the workers and only connects: it
// registers no worker and takes no lease.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/exitcode"
	"github.com/agora-etl/agora/internal/redact"
)

// Exit statuses of Run.
const (
	// ExitOK means the command did what it was asked.
	ExitOK = exitcode.OK
	// ExitFailure means Redis was unreachable, the settings were wrong, or a
	// pipeline is unknown to the fleet.
	ExitFailure = exitcode.Failure
	// ExitUsage means the command line was wrong.
	ExitUsage = exitcode.Usage
)

// usageText lists the subcommands.
const usageText = `usage: fleet [--json] [--redis URL] <command> [args]

Commands:
  workers          live workers: id, host, pid, version, pipelines, started, last heartbeat
  leases           per pipeline: holder, holder alive, fencing token, run number, expires in
  pipelines        per pipeline: schedule, workers, last completed slot, next run,
                   last outcome, last success, paused, once completed
  pause ID         pause a pipeline fleet-wide: replicas skip its scheduled attempts
                   (a run in flight finishes)
  resume ID        clear a pipeline's pause
  trigger ID       run a pipeline once now, on exactly one replica
  runs [ID]        run history, newest first: pipeline, run, token, worker, start, end,
                   duration, outcome, records in/out/dead-lettered, triggered, error
                   (--limit N, default 20; --failed; --since D such as 1h)
  ui               the web dashboard (--listen 127.0.0.1:8090; --token T or
                   AGORA_UI_TOKEN enables pause, resume and trigger)

Flags (before or after the command):
  --json           print JSON instead of a table
  --redis URL      the fleet's Redis, instead of AGORA_DISTRIBUTED_REDIS_URL

The fleet is found with the workers' settings: AGORA_DISTRIBUTED_REDIS_URL
(or --redis) and the other AGORA_DISTRIBUTED_* variables.
Exit status: 0 ok, 1 Redis unreachable, bad settings or unknown pipeline, 2 usage.
`

// Usage returns the help text of Run.
func Usage() string { return usageText }

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Run runs one fleet command (args without the program and "fleet" words),
// prints its result to stdout and problems to stderr, and returns the exit
// status: ExitOK, ExitFailure or ExitUsage.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a, err := parseArgs(args)
	cmd, rest, fl := a.cmd, a.rest, a.flags
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "fleet: %s\n\n%s", redact.Text(err.Error()), usageText)
			return ExitUsage
		}
		fmt.Fprintf(stderr, "fleet: %s\n", redact.Text(err.Error()))
		return ExitFailure
	}
	if cmd == "help" {
		fmt.Fprint(stdout, usageText)
		return ExitOK
	}
	open := registeredOpener()
	if open == nil {
		fmt.Fprintln(stderr, "fleet: no fleet backend linked in (import github.com/agora-etl/agora/runtime/distributed)")
		return ExitFailure
	}
	b, err := open(ctx, a.redis)
	if err != nil {
		fmt.Fprintf(stderr, "fleet: %s\n", problem(err, a.redis))
		return ExitFailure
	}
	defer b.Close()
	c := &command{b: b, out: stdout, json: fl.json, now: time.Now()}
	switch cmd {
	case "workers":
		err = c.workers(ctx)
	case "leases":
		err = c.leases(ctx, rest)
	case "pipelines":
		err = c.pipelines(ctx)
	case "pause":
		err = c.pause(ctx, rest[0])
	case "resume":
		err = c.resume(ctx, rest[0])
	case "trigger":
		err = c.trigger(ctx, rest[0])
	case "runs":
		err = c.runs(ctx, rest, runsFilter{limit: fl.limit, failed: fl.failed, since: fl.since})
	case "ui":
		err = serveUI(ctx, b, UIOptions{Listen: fl.listen, Token: fl.token}, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fleet %s: %s\n", cmd, problem(err, a.redis))
		return ExitFailure
	}
	return ExitOK
}

// problem is err as Run prints it after its own "fleet: " prefix: without
// a second one (ErrNotConfigured's), and with passwords (those of the
// --redis URL by value) redacted.
func problem(err error, redisURL string) string {
	return redact.NewKnown(redact.Secrets(redisURL)).Text(strings.TrimPrefix(err.Error(), "fleet: "))
}

// argCount is how many positional arguments each command takes (-1: any
// number of pipeline ids).
var argCount = map[string]int{
	"workers": 0, "leases": -1, "pipelines": 0, "pause": 1, "resume": 1, "trigger": 1, "help": 0,
	"runs": -2, "ui": 0, // -2: at most one
}

// cmdFlags are the flags of a command line; which are accepted depends on
// the command (see parseArgs).
type cmdFlags struct {
	json   bool
	limit  int
	failed bool
	since  time.Duration
	listen string
	token  string
	redis  string // --redis, "" for the environment's
}

// args is a parsed command line.
type args struct {
	cmd   string
	rest  []string
	flags cmdFlags
	redis string
}

// commandFlags names the flags only some commands take.
var commandFlags = map[string]string{"limit": "runs", "failed": "runs", "since": "runs", "listen": "ui", "token": "ui"}

// parseArgs splits the command word, its positional arguments and its
// flags (--json and --redis URL everywhere; --limit, --failed, --since for
// runs; --listen, --token for ui), which may come before or after the
// command.
func parseArgs(argv []string) (args, error) {
	var fl cmdFlags
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&fl.json, "json", false, "print JSON")
	fs.StringVar(&fl.redis, "redis", "", "the fleet's Redis URL")
	fs.IntVar(&fl.limit, "limit", DefaultRunsLimit, "at most this many runs")
	fs.BoolVar(&fl.failed, "failed", false, "only runs that did not succeed")
	fs.DurationVar(&fl.since, "since", 0, "only runs that ended within this long")
	fs.StringVar(&fl.listen, "listen", DefaultUIListen, "address to listen on")
	fs.StringVar(&fl.token, "token", "", "token that enables the actions (default $AGORA_UI_TOKEN)")
	var words []string
	for remaining := argv; ; {
		if err := fs.Parse(remaining); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return args{cmd: "help"}, nil
			}
			return args{}, usageError{err.Error()}
		}
		remaining = fs.Args()
		if len(remaining) == 0 {
			break
		}
		words = append(words, remaining[0])
		remaining = remaining[1:]
	}
	if len(words) == 0 {
		return args{}, usageError{"no command given"}
	}
	cmd, rest := words[0], words[1:]
	switch cmd {
	case "-h", "-help", "--help":
		cmd = "help"
	}
	want, ok := argCount[cmd]
	if !ok {
		return args{}, usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
	var misplaced error
	fs.Visit(func(f *flag.Flag) {
		if only, ok := commandFlags[f.Name]; ok && only != cmd && misplaced == nil {
			misplaced = usageError{fmt.Sprintf("flag provided but not defined: -%s (only %s takes it)", f.Name, only)}
		}
	})
	switch {
	case misplaced != nil:
		return args{}, misplaced
	case want == 1 && len(rest) != 1:
		return args{}, usageError{fmt.Sprintf("%s takes one pipeline id, got %d arguments", cmd, len(rest))}
	case want == 0 && len(rest) > 0:
		return args{}, usageError{fmt.Sprintf("%s takes no arguments, got %q", cmd, rest)}
	case want == -2 && len(rest) > 1:
		return args{}, usageError{fmt.Sprintf("%s takes at most one pipeline id, got %q", cmd, rest)}
	case cmd == "runs" && fl.limit < 0:
		return args{}, usageError{fmt.Sprintf("--limit %d: must be 0 (all kept) or more", fl.limit)}
	case cmd == "runs" && fl.since < 0:
		return args{}, usageError{fmt.Sprintf("--since %s: must not be negative", fl.since)}
	}
	return args{cmd: cmd, rest: rest, flags: fl, redis: fl.redis}, nil
}

// command runs one subcommand against a backend.
type command struct {
	b    Backend
	out  io.Writer
	json bool
	now  time.Time
}

func (c *command) emit(v any) error {
	enc := json.NewEncoder(c.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (c *command) workers(ctx context.Context) error {
	ws, err := c.b.Workers(ctx)
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(ws)
	}
	t := newTable(c.out, "WORKER", "HOST", "PID", "VERSION", "PIPELINES", "STARTED", "HEARTBEAT")
	for _, w := range ws {
		t.row(w.ID, w.Host, fmt.Sprint(w.PID), w.Version, strings.Join(w.Pipelines, ","),
			w.StartedAt.UTC().Format(time.RFC3339), ago(c.now.Sub(w.LastHeartbeat)))
	}
	return t.flush()
}

// known returns every pipeline id some live worker runs, sorted, and the
// workers running each.
func known(ws []Worker) ([]string, map[string][]string) {
	by := map[string][]string{}
	for _, w := range ws {
		for _, id := range w.Pipelines {
			by[id] = append(by[id], w.ID)
		}
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, by
}

// unknownPipeline says that no live worker runs id.
func unknownPipeline(id string, ids []string) error {
	if len(ids) == 0 {
		return fmt.Errorf("unknown pipeline %q: no live worker is registered", id)
	}
	return fmt.Errorf("unknown pipeline %q: no live worker runs it (known: %s)", id, strings.Join(ids, ", "))
}

// leaseRow is one line of "fleet leases".
type leaseRow struct {
	LeaseState
	HolderAlive bool   `json:"holder_alive"`
	ExpiresIn   string `json:"expires_in,omitempty"`
}

func (c *command) leases(ctx context.Context, only []string) error {
	ws, err := c.b.Workers(ctx)
	if err != nil {
		return err
	}
	ids, _ := known(ws)
	if len(only) > 0 {
		for _, id := range only {
			if !slices.Contains(ids, id) {
				return unknownPipeline(id, ids)
			}
		}
		ids = only
	}
	states, err := c.b.LeaseStates(ctx, ids)
	if err != nil {
		return err
	}
	alive := map[string]bool{}
	for _, w := range ws {
		alive[w.ID] = true
	}
	rows := make([]leaseRow, len(states))
	for i, st := range states {
		rows[i] = leaseRow{LeaseState: st, HolderAlive: st.Held && alive[st.Holder]}
		if st.Held {
			rows[i].ExpiresIn = st.ExpiresIn.Round(time.Second).String()
		}
	}
	if c.json {
		return c.emit(rows)
	}
	t := newTable(c.out, "PIPELINE", "HOLDER", "ALIVE", "TOKEN", "RUN", "EXPIRES IN")
	for _, r := range rows {
		if !r.Held {
			t.row(r.PipelineID, "-", "-", "-", "-", "-")
			continue
		}
		t.row(r.PipelineID, r.Holder, yesNo(r.HolderAlive), fmt.Sprint(r.FencingToken), fmt.Sprint(r.RunNumber), r.ExpiresIn)
	}
	return t.flush()
}

func (c *command) pipelines(ctx context.Context) error {
	rows, _, err := Overview(ctx, c.b, c.now)
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(rows)
	}
	t := newTable(c.out, "PIPELINE", "SCHEDULE", "WORKERS", "LAST COMPLETED", "NEXT RUN", "LAST OUTCOME", "LAST SUCCESS", "PAUSED", "ONCE COMPLETED")
	for _, r := range rows {
		sched := r.Schedule
		if sched == "" {
			sched = "-"
		}
		outcome := string(r.LastOutcome)
		if outcome == "" {
			outcome = "-"
		}
		t.row(r.PipelineID, sched, fmt.Sprint(len(r.Workers)), timeOrDash(r.LastCompleted), timeOrDash(r.NextRun),
			outcome, timeOrDash(r.LastSuccess), yesNo(r.Paused), yesNo(r.OnceCompleted))
	}
	return t.flush()
}

// checkKnown fails unless a live worker runs id.
func (c *command) checkKnown(ctx context.Context, id string) error {
	ws, err := c.b.Workers(ctx)
	if err != nil {
		return err
	}
	ids, _ := known(ws)
	if !slices.Contains(ids, id) {
		return unknownPipeline(id, ids)
	}
	return nil
}

// result is what pause, resume and trigger print with --json.
type result struct {
	PipelineID string `json:"pipeline_id"`
	Action     string `json:"action"`
	Changed    bool   `json:"changed"`
	Message    string `json:"message"`
}

func (c *command) report(r result) error {
	if c.json {
		return c.emit(r)
	}
	_, err := fmt.Fprintln(c.out, r.Message)
	return err
}

func (c *command) pause(ctx context.Context, id string) error {
	if err := c.checkKnown(ctx, id); err != nil {
		return err
	}
	if err := c.b.Pause(ctx, id, ""); err != nil {
		return err
	}
	return c.report(result{PipelineID: id, Action: "pause", Changed: true, Message: fmt.Sprintf(
		"paused %s: every replica skips its scheduled attempts within %s; a run in flight finishes", id, c.b.PollInterval())})
}

func (c *command) resume(ctx context.Context, id string) error {
	was, err := c.b.Resume(ctx, id)
	if err != nil {
		return err
	}
	if !was {
		// Not paused: unknown, or simply running.
		if err := c.checkKnown(ctx, id); err != nil {
			return err
		}
		return c.report(result{PipelineID: id, Action: "resume", Message: fmt.Sprintf("%s was not paused", id)})
	}
	return c.report(result{PipelineID: id, Action: "resume", Changed: true,
		Message: fmt.Sprintf("resumed %s: its next scheduled slot runs", id)})
}

func (c *command) trigger(ctx context.Context, id string) error {
	if err := c.checkKnown(ctx, id); err != nil {
		return err
	}
	paused, err := c.b.PausedPipelines(ctx)
	if err != nil {
		return err
	}
	if _, ok := paused[id]; ok {
		return fmt.Errorf("pipeline %q is paused; resume it first (fleet resume %s)", id, id)
	}
	if err := c.b.Trigger(ctx, id); err != nil {
		return err
	}
	return c.report(result{PipelineID: id, Action: "trigger", Changed: true, Message: fmt.Sprintf(
		"triggered %s: one replica runs it within about %s, under its own lease; the schedule is unchanged", id, c.b.PollInterval())})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// ago formats a heartbeat's age to the second.
func ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String() + " ago"
}
