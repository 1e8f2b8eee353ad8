package gen

import (
	"fmt"
	"io"
	"strings"
)

// Namespace starts every agoragen directive. Like //go: directives it has no
// space after the slashes, so gofmt and godoc treat it as a directive.
const Namespace = "//agora:"

// ValueType is the type of a directive key's value.
type ValueType uint8

// The value types keys can have.
const (
	// Flag keys take no value: "continuous".
	Flag ValueType = iota
	// Duration keys take a Go duration: "30s", "1h30m".
	Duration
	// Int keys take a decimal integer.
	Int
	// String keys take a bare word or a double-quoted Go string.
	String
	// Enum keys take one of the key's listed values.
	Enum
	// CronExpr keys take a quoted cron expression.
	CronExpr
)

// Syntax returns how a value of type t is written after "key=".
func (t ValueType) Syntax() string {
	switch t {
	case Duration:
		return "<duration>"
	case Int:
		return "<int>"
	case String:
		return "<string>"
	case CronExpr:
		return `"<cron expression>"`
	default:
		return ""
	}
}

// Key is one key a directive accepts.
type Key struct {
	Name string
	Type ValueType
	// Values lists the accepted values of an Enum key, the default first.
	Values []string
	// Kind marks the schedule-kind keys, of which a directive takes exactly
	// one.
	Kind bool
	// Doc says what the key means, for -help and the docs.
	Doc string
}

// Usage returns the key as a user would write it.
func (k Key) Usage() string {
	switch k.Type {
	case Flag:
		return k.Name
	case Enum:
		return k.Name + "=" + strings.Join(k.Values, "|")
	default:
		return k.Name + "=" + k.Type.Syntax()
	}
}

// Directive is one directive of the agora namespace.
type Directive struct {
	Name  string
	Where string
	Doc   string
	Keys  []Key
}

// Key returns the key called name.
func (d *Directive) Key(name string) (Key, bool) {
	for _, k := range d.Keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// KeyNames returns the names of d's keys in registry order.
func (d *Directive) KeyNames() []string {
	names := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		names[i] = k.Name
	}
	return names
}

// Directive names.
const (
	ScheduleDirective = "schedule"
	WorkerDirective   = "worker"
)

// Registry lists every directive and key agoragen understands. The parser,
// the checks, -help and docs/agoragen.md all read it, so they cannot drift
// apart.
var Registry = []*Directive{
	{
		Name:  ScheduleDirective,
		Where: "doc comment of a top-level, non-generic function func(context.Context) (P, error), P implementing runtime.Pipeline",
		Doc:   "Declares one pipeline: the function is its factory, called before every run.",
		Keys: []Key{
			{Name: "every", Type: Duration, Kind: true, Doc: "run once per interval of this length (positive); replicas share one run per interval"},
			{Name: "cron", Type: CronExpr, Kind: true, Doc: "run at the times of a cron expression: 5 fields, an optional leading seconds field, @hourly-style descriptors, @every <duration>, CRON_TZ=<zone> prefix"},
			{Name: "continuous", Type: Flag, Kind: true, Doc: "start the next run as soon as the previous one returns"},
			{Name: "once", Type: Flag, Kind: true, Doc: "run until one run succeeds somewhere in the fleet, then stop"},
			{Name: "id", Type: String, Doc: "pipeline id in leases, logs and /status; letters, digits, '_', '.', '-'; default: the function name without a Build/New prefix, in kebab-case (BuildOrdersHourly -> orders-hourly)"},
			{Name: "backoff", Type: Duration, Doc: "delay after the first failed run, doubled per further failure up to 10m (positive; default 60s)"},
			{Name: "max_errors", Type: Int, Doc: "stop the pipeline after this many failed runs in a row (0, the default, never stops)"},
			{Name: "catch_up", Type: Enum, Values: []string{"skip", "latest", "all"}, Doc: "cron only: what to do about slots missed while every replica (or Redis) was down: skip (default: only the newest, within grace), latest (the newest once, however late), all (each in order, at most 100)"},
			{Name: "grace", Type: Duration, Doc: "cron only: how late a slot may start and still run under catch_up=skip (positive; default 1m)"},
			{Name: "timeout", Type: Duration, Doc: "cancel a run still going after this long; it counts as failed and its lease is released (positive; default: no limit)"},
			{Name: "deadline", Type: Duration, Doc: "cron and every only: how long after its fire time a slot must have succeeded; a slot that has not is reported once as missed (positive; default: none)"},
			{Name: "after", Type: String, Doc: "cron and every only: the pipelines this one depends on, by id, comma-separated (after=extract, after=\"extract,clean\"); slot S starts only once each of them completed slot S, fleet-wide; both need the same schedule"},
			{Name: "after_timeout", Type: Duration, Doc: "with after only: how long after its fire time a slot waits for its upstreams before it is skipped (positive; default: until the next slot)"},
			{Name: "timezone", Type: String, Doc: "cron only: the IANA time zone the expression's times are read in, such as Europe/Berlin (the form of a CRON_TZ=<zone> prefix; default: the worker's local zone)"},
			{Name: "rerun_interrupted", Type: Flag, Doc: "cron and every only: re-run a slot whose holder died before completing it, on the worker that takes the lease over, with a new fencing token (with a fenced upsert sink: effectively once)"},
		},
	},
	{
		Name:  WorkerDirective,
		Where: "package doc comment (above the package clause of any one file), at most once per package",
		Doc:   "Sets up the worker pool GetWorker returns.",
		Keys: []Key{
			{Name: "health_port", Type: Int, Doc: "serve /healthz, /readyz and /status on this port (0-65535; 0 picks a free port; default: no health server)"},
			{Name: "graceful_shutdown", Type: Duration, Doc: "how long runs in flight may take to finish after a shutdown begins (positive; default 30s)"},
			{Name: "distributed", Type: Enum, Values: []string{"auto", "required", "off"}, Doc: "auto: share leases through Redis when AGORA_DISTRIBUTED_REDIS_URL is set; required: GetWorker fails when it is not; off: never (the distributed package is not imported)"},
			{Name: "main", Type: Flag, Doc: "also generate func main() calling worker.Main(GetWorker) (package main only; same as the -main flag)"},
		},
	},
}

// lookupDirective returns the registry entry called name.
func lookupDirective(name string) (*Directive, bool) {
	for _, d := range Registry {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// WriteReference writes the directive reference shown by -help.
func WriteReference(w io.Writer) {
	for i, d := range Registry {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s%s  %s\n  where: %s\n", Namespace, d.Name, d.Doc, d.Where)
		width := 0
		for _, k := range d.Keys {
			width = max(width, len(k.Usage()))
		}
		for _, k := range d.Keys {
			fmt.Fprintf(w, "  %-*s  %s\n", width, k.Usage(), k.Doc)
		}
		if d.Name == ScheduleDirective {
			fmt.Fprintln(w, "  exactly one of every, cron, continuous, once")
		}
	}
}
