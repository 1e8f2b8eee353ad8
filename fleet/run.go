// Package fleet is the operator's view of a fleet of agora workers: who is
// alive, who holds which lease, what each pipeline did last and does next,
// the fleet-wide commands pause, resume and trigger, and the audit log of
// who gave them.
//
// Run is the one entry point; the agora command serves it as "agora fleet"
// and every worker binary as "./worker fleet" (package worker's entry
// serves it, with Summary in its -help). It works over a distributed.Inspector, opened with
// the same AGORA_DISTRIBUTED_* settings as the workers, and only connects:
// it registers no worker and takes no lease. With --json it prints the
// Inspector's result types as they are (see distributed.Inspector for the
// JSON conventions).
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/exitcode"
	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/internal/texttable"
	"github.com/agora-etl/agora/runtime/distributed"
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
                   (a run in flight finishes); --reason TEXT says why, --until T
                   (RFC 3339, or a duration from now such as 2h) resumes it by itself
  resume ID        clear a pipeline's pause (--reason TEXT)
  trigger ID       run a pipeline once now, on exactly one replica (--reason TEXT);
                   --param KEY=VALUE, repeatable, gives the run a parameter
                   (SQL :param_KEY, CEL params.KEY, runtime.ParamsFromContext);
                   --slot T runs that slot of a cron or every pipeline (RFC 3339,
                   or a duration from now), as a backfill of one slot: skipped
                   if it completed, unless --reprocess
  backfill ID      run every slot of a cron or every pipeline in a range, once across
                   the fleet, oldest first: --from T --to T (RFC 3339, or a duration
                   from now such as -24h), --parallel N (default 1), --reprocess
                   (run completed slots again), --downstream (also the pipelines
                   with after= on it, each slot after this one's), --reason TEXT;
                   --status shows its progress, --cancel stops it (slots in
                   flight finish)
  audit [ID]       who paused, resumed and triggered what, newest first: at, pipeline,
                   action, actor, reason, until, params (--limit N, default 20)
  runs [ID]        run history, newest first: pipeline, run, token, worker, start, end,
                   duration, outcome, records in/out/dead-lettered, triggered, params, error
                   (--limit N, default 20; --failed; --since D such as 1h)
  ui               the web dashboard (--listen 127.0.0.1:8090; a token from
                   AGORA_UI_TOKEN, --token-file F or --token T locks reading
                   and enables pause, resume and trigger; --allowed-host H,
                   repeatable, names it answers to besides localhost), in the
                   agora command and binaries that link it (fleet.WithDashboard)

Flags (before or after the command):
  --json           print JSON instead of a table
  --redis URL      the fleet's Redis, instead of AGORA_DISTRIBUTED_REDIS_URL

The fleet is found with the workers' settings: AGORA_DISTRIBUTED_REDIS_URL
(or --redis) and the other AGORA_DISTRIBUTED_* variables.
Exit status: 0 ok, 1 Redis unreachable, bad settings or unknown pipeline, 2 usage.
`

// Usage returns the help text of Run.
func Usage() string { return usageText }

// Summary is the one-line description of the "fleet" subcommand of worker
// binaries ("./worker fleet ..."), which package worker serves with Run.
const Summary = "inspect and steer the fleet: workers, leases, pipelines, pause ID, resume ID, trigger ID, backfill ID, audit (fleet -h)"

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Run runs one fleet command (args without the program and "fleet" words),
// prints its result to stdout and problems to stderr, and returns the exit
// status: ExitOK, ExitFailure or ExitUsage. The ui command needs a
// dashboard (WithDashboard); without one it says where the dashboard is
// and exits with ExitUsage.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
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
	if cmd == "ui" && o.dashboard == nil {
		fmt.Fprint(stderr, noDashboard)
		return ExitUsage
	}
	in, err := distributed.OpenInspector(ctx, a.redis)
	if err != nil {
		fmt.Fprintf(stderr, "fleet: %s\n", problem(err, a.redis))
		return ExitFailure
	}
	defer in.Close()
	c := &command{in: in, out: stdout, json: fl.json, now: time.Now()}
	ctl := controlOptions(fl)
	switch cmd {
	case "workers":
		err = c.workers(ctx)
	case "leases":
		err = c.leases(ctx, rest)
	case "pipelines":
		err = c.pipelines(ctx)
	case "pause":
		err = c.report(in.Pause(ctx, rest[0], "", ctl...))
	case "resume":
		err = c.report(in.Resume(ctx, rest[0], ctl...))
	case "trigger":
		err = c.trigger(ctx, rest[0], fl, ctl...)
	case "backfill":
		err = c.backfill(ctx, rest[0], fl, ctl...)
	case "audit":
		err = c.audit(ctx, distributed.AuditQuery{PipelineIDs: rest, Limit: fl.limit})
	case "runs":
		err = c.runs(ctx, distributed.RunQuery{PipelineIDs: rest, Limit: fl.limit, Failed: fl.failed, Since: fl.since})
	case "ui":
		err = serveUI(ctx, o.dashboard, in, fl, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fleet %s: %s\n", cmd, problem(err, a.redis))
		return ExitFailure
	}
	return ExitOK
}

// problem is err as Run prints it after its own "fleet: " prefix: without
// the inspector's "distributed: " in front, and with passwords (those of
// the --redis URL by value) redacted.
func problem(err error, redisURL string) string {
	return redact.NewKnown(redact.Secrets(redisURL)).Text(strings.TrimPrefix(err.Error(), "distributed: "))
}

// argCount is how many positional arguments each command takes (-1: any
// number of pipeline ids).
var argCount = map[string]int{
	"workers": 0, "leases": -1, "pipelines": 0, "pause": 1, "resume": 1, "trigger": 1, "backfill": 1, "help": 0,
	"runs": -2, "audit": -2, "ui": 0, // -2: at most one
}

// cmdFlags are the flags of a command line; which are accepted depends on
// the command (see parseArgs).
type cmdFlags struct {
	json      bool
	limit     int
	failed    bool
	since     time.Duration
	listen    string
	token     string
	tokenFile string
	hosts     hostList
	redis     string // --redis, "" for the environment's
	reason    string
	until     string
	untilAt   time.Time // until, parsed
	params    paramList // --param, trigger's
	backfill  backfillFlags
	slot      string    // --slot, trigger's
	slotAt    time.Time // slot, parsed
}

// args is a parsed command line.
type args struct {
	cmd   string
	rest  []string
	flags cmdFlags
	redis string
}

// commandFlags names the commands that take each flag only some take.
var commandFlags = map[string][]string{"limit": {"runs", "audit"}, "failed": {"runs"}, "since": {"runs"}, "listen": {"ui"}, "token": {"ui"},
	"token-file": {"ui"}, "allowed-host": {"ui"}, "reason": {"pause", "resume", "trigger", "backfill"}, "until": {"pause"}, "param": {"trigger"},
	"from": {"backfill"}, "to": {"backfill"}, "parallel": {"backfill"}, "reprocess": {"backfill", "trigger"}, "slot": {"trigger"}, "downstream": {"backfill"}, "status": {"backfill"}, "cancel": {"backfill"}}

// parseArgs splits the command word, its positional arguments and its
// flags (--json and --redis URL everywhere; --limit, --failed, --since for
// runs; --limit for audit; --reason for pause, resume and trigger; --until
// for pause; --param for trigger; --listen, --token for ui), which may
// come before or after the command.
func parseArgs(argv []string) (args, error) {
	var fl cmdFlags
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&fl.json, "json", false, "print JSON")
	fs.StringVar(&fl.redis, "redis", "", "the fleet's Redis URL")
	fs.IntVar(&fl.limit, "limit", DefaultRunsLimit, "at most this many runs")
	fs.BoolVar(&fl.failed, "failed", false, "only runs that did not succeed")
	fs.DurationVar(&fl.since, "since", 0, "only runs that ended within this long")
	fs.StringVar(&fl.listen, "listen", DefaultDashboardListen, "address to listen on")
	fs.StringVar(&fl.token, "token", "", "token that locks the dashboard (visible in ps: prefer --token-file or $AGORA_UI_TOKEN)")
	fs.StringVar(&fl.tokenFile, "token-file", "", "file holding the dashboard's token")
	fs.Var(&fl.hosts, "allowed-host", "a name the dashboard answers to besides localhost (repeatable)")
	fs.StringVar(&fl.reason, "reason", "", "why: kept with a pause and in the audit log")
	fs.StringVar(&fl.until, "until", "", "when a pause ends by itself: RFC 3339, or a duration from now")
	fs.Var(&fl.params, "param", "a parameter of the triggered run, key=value (repeatable)")
	fs.StringVar(&fl.backfill.from, "from", "", "the backfill's first slot: RFC 3339, or a duration from now (-24h)")
	fs.StringVar(&fl.backfill.to, "to", "", "the end of the backfill's range, not included")
	fs.IntVar(&fl.backfill.parallel, "parallel", 0, "how many slots of the backfill run at once across the fleet")
	fs.BoolVar(&fl.backfill.reprocess, "reprocess", false, "run slots that completed, again")
	fs.BoolVar(&fl.backfill.downstream, "downstream", false, "also backfill the pipelines that wait for this one (after=), each slot after this one's")
	fs.StringVar(&fl.slot, "slot", "", "the slot trigger runs: RFC 3339, or a duration from now")
	fs.BoolVar(&fl.backfill.status, "status", false, "show the backfill's progress")
	fs.BoolVar(&fl.backfill.cancel, "cancel", false, "cancel the backfill")
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
		if only, ok := commandFlags[f.Name]; ok && !slices.Contains(only, cmd) && misplaced == nil {
			misplaced = usageError{fmt.Sprintf("flag provided but not defined: -%s (only %s takes it)", f.Name, strings.Join(only, ", "))}
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
	case (cmd == "runs" || cmd == "audit") && fl.limit < 0:
		return args{}, usageError{fmt.Sprintf("--limit %d: must be 0 (all kept) or more", fl.limit)}
	case cmd == "runs" && fl.since < 0:
		return args{}, usageError{fmt.Sprintf("--since %s: must not be negative", fl.since)}
	}
	if cmd == "backfill" {
		if err := checkBackfill(&fl, time.Now()); err != nil {
			return args{}, err
		}
	}
	if cmd == "trigger" {
		if err := checkTriggerSlot(&fl, time.Now()); err != nil {
			return args{}, err
		}
	}
	if fl.until != "" {
		t, err := parseUntil(fl.until, time.Now())
		if err != nil {
			return args{}, usageError{err.Error()}
		}
		fl.untilAt = t
	}
	return args{cmd: cmd, rest: rest, flags: fl, redis: fl.redis}, nil
}

// command runs one subcommand against an inspector.
type command struct {
	in   *distributed.Inspector
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
	ws, err := c.in.Workers(ctx)
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

func (c *command) leases(ctx context.Context, only []string) error {
	rows, err := c.in.Leases(ctx, only...)
	if err != nil {
		return err
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
		t.row(r.PipelineID, r.Holder, yesNo(r.HolderAlive), fmt.Sprint(r.FencingToken), fmt.Sprint(r.RunNumber),
			r.ExpiresIn.Round(time.Second).String())
	}
	return t.flush()
}

func (c *command) pipelines(ctx context.Context) error {
	rows, err := c.in.Pipelines(ctx)
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(rows)
	}
	t := newTable(c.out, "PIPELINE", "SCHEDULE", "WORKERS", "LAST COMPLETED", "NEXT RUN", "LAST OUTCOME", "LAST SUCCESS", "PAUSED", "ONCE COMPLETED", "ERRORS", "BACKOFF UNTIL", "DEADLINE MISSED", "BACKFILL", "LAST ERROR")
	for _, r := range rows {
		sched := r.Schedule
		if sched == "" {
			sched = "-"
		}
		outcome := string(r.LastOutcome)
		if outcome == "" {
			outcome = "-"
		}
		errs := fmt.Sprint(r.ConsecutiveErrors)
		if r.FailedStop {
			errs += " (stopped)"
		}
		lastErr := "-"
		if r.ConsecutiveErrors > 0 {
			lastErr = oneLine(r.LastError)
		}
		t.row(r.PipelineID, sched, fmt.Sprint(len(r.Workers)), timeOrDash(r.LastCompleted), timeOrDash(r.NextRun),
			outcome, timeOrDash(r.LastSuccess), yesNo(r.Paused), yesNo(r.OnceCompleted), errs, timeOrDash(r.BackoffUntil), timeOrDash(r.LastDeadlineMissed), backfillCell(r.Backfill), lastErr)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if err := c.pauseNotes(rows); err != nil {
		return err
	}
	// A pipeline whose keys hold data agora did not write runs nowhere (or,
	// its deadline key, has no missed deadline reported or shown): said
	// under the table, where a row has no room for the key's name.
	for _, r := range rows {
		if r.Lease.Problem != "" {
			if _, err := fmt.Fprintf(c.out, "\nproblem: %s: %s\n", texttable.Printable(r.PipelineID), texttable.Printable(r.Lease.Problem)); err != nil {
				return err
			}
		}
	}
	return nil
}

// report prints what pause, resume or trigger did: the inspector's
// ControlResult with --json, its message otherwise.
func (c *command) report(r distributed.ControlResult, err error) error {
	if err != nil {
		return err
	}
	if c.json {
		return c.emit(r)
	}
	_, err = fmt.Fprintln(c.out, r.Message)
	return err
}

func (c *command) trigger(ctx context.Context, id string, fl cmdFlags, opts ...distributed.ControlOption) error {
	if !fl.slotAt.IsZero() {
		return c.triggerSlot(ctx, id, fl)
	}
	r, err := c.in.Trigger(ctx, id, opts...)
	if errors.Is(err, distributed.ErrPipelinePaused) {
		return fmt.Errorf("%w (fleet resume %s)", err, id)
	}
	return c.report(r, err)
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
