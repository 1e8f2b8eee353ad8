package config

import (
	"math"
	"slices"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// FormatV1 is the only format this package reads.
const FormatV1 = "agora/v1"

// DefaultBatchSize is the batch size of a pipeline that sets none.
const DefaultBatchSize = 500

// File is a checked agora/v1 file.
type File struct {
	// Path is the name the file was loaded under.
	Path string
	// Worker holds the [worker] settings.
	Worker Worker
	// Pipelines are the [pipelines.<id>] tables in the order they first
	// appear in the file.
	Pipelines []*Pipeline

	lookupEnv func(string) (string, bool)
	known     *redact.Known
}

// Worker is the [worker] table. Zero values mean "not set": the pool's
// defaults apply.
type Worker struct {
	// HealthPort serves /healthz, /readyz and /status when HasHealthPort.
	HealthPort int
	// HasHealthPort is true when health_port was set (0 picks a free port).
	HasHealthPort bool
	// GracefulShutdownTimeout bounds how long runs may take to finish after
	// a shutdown begins; 0 means runtime.DefaultGracefulShutdownTimeout.
	GracefulShutdownTimeout time.Duration
	// WorkerID names this worker; "" means a unique id per process.
	WorkerID string
	// Notify is the [worker.notify] table; its URL is "" without one.
	Notify Notify
	// RunHistory is run_history: how much run history is kept per
	// pipeline, "RUNS[,MAX_AGE]" ("100,168h") or "off"; nil when not set.
	// AGORA_DISTRIBUTED_RUN_HISTORY, when set, wins.
	RunHistory *history.Policy
}

// Pipeline is one [pipelines.<id>] table.
type Pipeline struct {
	// ID is the table's key, the pipeline id in leases, logs and /status.
	ID string
	// Source is the source table.
	Source Component
	// Sinks are the sinks tables, in order; there is at least one.
	Sinks []Component
	// DLQ is the dead-letter sink, nil when there is none.
	DLQ *Component
	// Schedule says when the pipeline runs.
	Schedule Schedule
	// Tracing is the tracing table.
	Tracing Tracing
	// BatchSize is how many records a batch holds at most.
	BatchSize int
	// ErrorBackoff is the delay after a failed run, doubling per further
	// failure (default runtime.DefaultErrorBackoff).
	ErrorBackoff time.Duration
	// MaxConsecutiveErrors stops the pipeline after this many failed runs
	// in a row; 0 means never.
	MaxConsecutiveErrors int
	// MaxDeadLetters fails a run that dead-letters more records than this;
	// -1 (max_dead_letters not set) means no limit.
	MaxDeadLetters int
	// Transforms are the [[pipelines.<id>.transforms]] tables, built, in
	// order.
	Transforms []etl.Transform
	// Timeout bounds one run (runtime.ScheduledPipeline.Timeout): a run
	// past it is cancelled and fails. 0 means no limit.
	Timeout time.Duration
	// Deadline is how long after its fire time a cron or every slot must
	// have succeeded (runtime.ScheduledPipeline.Deadline); 0 means none.
	Deadline time.Duration
	// After names the pipelines of the file whose same slot must have
	// completed before this pipeline's starts
	// (runtime.ScheduledPipeline.After); nil: none.
	After []string
	// AfterTimeout bounds the wait for them
	// (runtime.ScheduledPipeline.AfterTimeout); 0 means until the next
	// slot.
	AfterTimeout time.Duration
	// Params are the run parameters the pipeline declares, with their
	// defaults (params = { day = "2026-01-01" }); nil for none. See
	// ErrUndeclaredParam.
	Params map[string]string

	known *redact.Known // the file's secrets, hidden in run errors
	// readState is where sources that remember what they read (the file
	// source) keep it, when the pool coordinates through Redis.
	readState etl.ReadState
	// afterAt is where each id of After is written, for diagnostics.
	afterAt []path
}

// PipelineIDs returns the pipeline ids in file order.
func (f *File) PipelineIDs() []string {
	ids := make([]string, len(f.Pipelines))
	for i, p := range f.Pipelines {
		ids[i] = p.ID
	}
	return ids
}

// Pipeline returns the pipeline with id, or nil.
func (f *File) Pipeline(id string) *Pipeline {
	for _, p := range f.Pipelines {
		if p.ID == id {
			return p
		}
	}
	return nil
}

var (
	topKeys      = []string{"format", "worker", "pipelines"}
	workerKeys   = []string{"health_port", "graceful_shutdown_timeout", "worker_id", "run_history", "notify"}
	pipelineKeys = []string{"source", "sinks", "schedule", "tracing", "dlq", "batch_size", "error_backoff", "max_consecutive_errors", "max_dead_letters", "timeout", "deadline", "transforms", "params"}
)

// document checks the whole file.
func (d *decoder) document(doc map[string]any) *File {
	root := path{}
	d.knownKeys(doc, root, topKeys)
	f := &File{}
	if _, has := doc["format"]; !has {
		d.addAt(position{1, 1}, "format is missing: start the file with format = %q", FormatV1)
	} else if s, ok := d.str(doc, root, "format"); ok && s != FormatV1 {
		d.atValue(root.child("format"), "format %s is not supported: the supported format is %q", d.quoted(root.child("format"), s), FormatV1)
	}
	if w, ok := d.table(doc, root, "worker"); ok {
		f.Worker = d.worker(w, root.child("worker"))
	}
	pipes, ok := d.table(doc, root, "pipelines")
	if _, has := doc["pipelines"]; !has || ok && len(pipes) == 0 {
		d.addAt(position{1, 1}, "no pipelines: add a [pipelines.<id>] table with a source, sinks and a schedule")
	}
	at := root.child("pipelines")
	ids := make([]string, 0, len(pipes))
	for id := range pipes {
		ids = append(ids, id)
	}
	rank := make(map[string]int, len(ids))
	for _, id := range ids {
		rank[id] = d.ix.order(at.child(id))
	}
	slices.SortFunc(ids, func(a, b string) int { return rank[a] - rank[b] })
	for _, id := range ids {
		pt, ok := d.table(pipes, at, id)
		if !ok {
			continue
		}
		if p := d.pipeline(id, pt, at.child(id)); p != nil {
			f.Pipelines = append(f.Pipelines, p)
		}
	}
	d.oneWriterPerFile(f)
	d.afterAcross(f)
	return f
}

func (d *decoder) worker(m map[string]any, p path) Worker {
	d.knownKeys(m, p, workerKeys)
	var w Worker
	if port, ok := d.integer(m, p, "health_port", 0, 65535); ok {
		w.HealthPort, w.HasHealthPort = port, true
	}
	if t, ok := d.duration(m, p, "graceful_shutdown_timeout", false); ok {
		w.GracefulShutdownTimeout = t
	}
	if id, ok := d.str(m, p, "worker_id"); ok {
		if id == "" {
			d.atValue(p.child("worker_id"), "%s: must not be empty (leave it out for a unique id per process)", p.child("worker_id"))
		}
		w.WorkerID = id
	}
	if v, ok := d.str(m, p, "run_history"); ok {
		if h, err := history.Parse(v); err != nil {
			d.atValue(p.child("run_history"), "%s: %s is not RUNS[,MAX_AGE] such as \"100,168h\", or \"off\"", p.child("run_history"), d.quoted(p.child("run_history"), v))
		} else {
			w.RunHistory = &h
		}
	}
	if n, ok := d.table(m, p, "notify"); ok {
		w.Notify = d.notify(n, p.child("notify"))
	}
	return w
}

func (d *decoder) pipeline(id string, m map[string]any, at path) *Pipeline {
	if err := runtime.ValidatePipelineID(id); err != nil {
		d.atKey(at, "%s", err)
	}
	d.knownKeys(m, at, slices.Concat(pipelineKeys, afterKeys))
	p := &Pipeline{ID: id, BatchSize: DefaultBatchSize, ErrorBackoff: runtime.DefaultErrorBackoff, MaxDeadLetters: -1}
	p.Params = d.params(m, at)

	if src, ok := d.table(m, at, "source"); ok {
		p.Source = d.component(src, at.child("source"), etl.KindSource)
		d.checkParamsRead(p.Source.Config, at.child("source"), at, p.Params)
	} else if _, has := m["source"]; !has {
		d.atKey(at, "%s: source is missing: add a [%s.source] table with a type", at, at)
	}
	sinks, ok := d.tables(m, at, "sinks")
	_, has := m["sinks"]
	switch {
	case !has:
		d.atKey(at, "%s: sinks are missing: add at least one [[%s.sinks]] table with a type", at, at)
	case ok && len(sinks) == 0:
		d.atValue(at.child("sinks"), "%s: no sinks: add at least one [[%s.sinks]] table with a type", at.child("sinks"), at)
	}
	names := map[string]int{}
	for i, s := range sinks {
		c := d.component(s, at.child("sinks").index(i), etl.KindSink)
		if j, dup := names[c.Name]; dup && c.Name != "" {
			d.atValue(at.child("sinks").index(i).child("name"), "%s: sink name %s is used by sinks[%d] too: names are unique per pipeline", at.child("sinks").index(i).child("name"), d.quoted(at.child("sinks").index(i).child("name"), c.Name), j)
		} else if c.Name != "" {
			names[c.Name] = i
		}
		p.Sinks = append(p.Sinks, c)
	}
	if dlq, ok := d.table(m, at, "dlq"); ok {
		c := d.component(dlq, at.child("dlq"), etl.KindSink)
		p.DLQ = &c
	}
	if s, ok := d.table(m, at, "schedule"); ok {
		p.Schedule = d.schedule(s, at.child("schedule"))
	} else if _, has := m["schedule"]; !has {
		d.atKey(at, "%s: schedule is missing: add a [%s.schedule] table with mode = \"every\", \"cron\", \"continuous\" or \"once\"", at, at)
	}
	if t, ok := d.table(m, at, "tracing"); ok {
		p.Tracing = d.tracing(t, at.child("tracing"))
	}
	if n, ok := d.integer(m, at, "batch_size", 1, math.MaxInt32); ok {
		p.BatchSize = n
	}
	if b, ok := d.duration(m, at, "error_backoff", false); ok {
		p.ErrorBackoff = b
	}
	p.Transforms = d.transforms(m, at, p.Params)
	if t, ok := d.duration(m, at, "timeout", false); ok {
		p.Timeout = t
	}
	if dl, ok := d.duration(m, at, "deadline", false); ok {
		p.Deadline = dl
		// A deadline is counted from a slot's fire time, and only cron and
		// every schedules have one. A missing or broken schedule is
		// reported already, so only a mode that is known to lack fire
		// times is reported here.
		if mode := p.Schedule.Mode; mode == "continuous" || mode == "once" {
			d.atKey(at.child("deadline"), "%s: deadline needs a cron or every schedule (mode = %q has no fire times to count from)", at.child("deadline"), mode)
		} else if mode == "every" && p.Schedule.Every > 0 && p.Schedule.Every < time.Second {
			// The pool refuses it too: runs this frequent are numbered one
			// by one, not by a slot.
			d.atKey(at.child("deadline"), "%s: deadline needs an every interval of at least a second, not %s: faster runs have no slot to judge", at.child("deadline"), p.Schedule.Every)
		}
	}
	d.after(m, at, p)
	if n, ok := d.integer(m, at, "max_consecutive_errors", 0, math.MaxInt); ok {
		p.MaxConsecutiveErrors = n
	}
	if n, ok := d.integer(m, at, "max_dead_letters", 0, math.MaxInt); ok {
		p.MaxDeadLetters = n
		if _, hasDLQ := m["dlq"]; !hasDLQ {
			d.atKey(at.child("max_dead_letters"), "%s: there is no dlq to count dead letters for: add a [%s.dlq] table or remove max_dead_letters", at.child("max_dead_letters"), at)
		}
	}
	return p
}
