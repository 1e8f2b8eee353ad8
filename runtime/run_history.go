package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/redact"
)

// RunOutcome is how a run that started ended, as the run history records it.
type RunOutcome string

// The outcomes of a run.
const (
	// OutcomeSucceeded: Run returned nil.
	OutcomeSucceeded RunOutcome = "succeeded"
	// OutcomeFailed: Run (or its factory or Close) returned an error.
	OutcomeFailed RunOutcome = "failed"
	// OutcomeCancelled: the run's context was cancelled by the pool (a lost
	// lease, a shutdown's timeout, a forced shutdown) and the run ended
	// with an error.
	OutcomeCancelled RunOutcome = "cancelled"
	// OutcomeStale: a fenced sink refused the run's writes because a newer
	// fencing token had written already (an error carrying this outcome,
	// such as fencing's StaleWriterError).
	OutcomeStale RunOutcome = "stale"
	// OutcomeSlotDone: a fenced sink refused the run's writes because its
	// slot was already written by another run of it.
	OutcomeSlotDone RunOutcome = "slot_done"
)

// OutcomeError is implemented by errors that decide the outcome a failed
// run is recorded with, so that packages the runtime does not know (the
// fenced sinks) can name theirs. The run history looks for one along the
// error's chain (errors.As).
type OutcomeError interface {
	error
	RunOutcome() RunOutcome
}

// RunRecord is what the run history keeps of one run.
type RunRecord struct {
	// PipelineID is the pipeline that ran.
	PipelineID string `json:"pipeline_id"`
	// RunNumber is the run's slot (Unix seconds) or number.
	RunNumber int64 `json:"run_number"`
	// FencingToken is the lease's fencing token (0 when unfenced).
	FencingToken int64 `json:"fencing_token"`
	// WorkerID is the worker that ran it.
	WorkerID string `json:"worker_id"`
	// Start and End bound the run.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Duration is End - Start.
	Duration time.Duration `json:"duration_ns"`
	// Outcome is how it ended.
	Outcome RunOutcome `json:"outcome"`
	// Error is the run's error text, passwords redacted, cut to
	// MaxRunErrorLen bytes; empty after a success.
	Error string `json:"error,omitempty"`
	// Records are the records it moved (record pipelines).
	Records RecordCounts `json:"records"`
	// Triggered is true for a run an operator asked for (a trigger, RunNow),
	// false for a scheduled one.
	Triggered bool `json:"triggered"`
	// Params are the parameters its trigger gave (ParamsFromContext); nil
	// for a scheduled run.
	Params map[string]string `json:"params,omitempty"`
}

// MaxRunErrorLen bounds the error text a RunRecord keeps.
const MaxRunErrorLen = 2048

// RunRecorder is the capability (Capabilities.RunRecorder) of coordinators
// that keep a run history. The pool then ends each run with FinishRun
// instead of ReleaseLease or CompleteLease: it gives the lease back
// (completing it when the outcome is OutcomeSucceeded) and records rec in
// the same step, so recording costs no extra round trip. The coordinator
// fills in RunNumber, FencingToken and WorkerID from the lease it holds.
type RunRecorder interface {
	FinishRun(ctx context.Context, rec RunRecord) error
}

// RunHistoryReader is the capability (Capabilities.RunHistoryReader) of
// coordinators whose run history can be read back: the newest runs of a
// pipeline first, at most limit of them (limit <= 0: all that are kept).
type RunHistoryReader interface {
	RunHistory(ctx context.Context, pipelineID string, limit int) ([]RunRecord, error)
}

// RunHistoryPolicy bounds the run history kept per pipeline.
type RunHistoryPolicy struct {
	// Off keeps no history at all.
	Off bool
	// Limit is how many runs are kept (default DefaultRunHistoryLimit).
	Limit int
	// MaxAge is how long a run is kept (default DefaultRunHistoryMaxAge).
	MaxAge time.Duration
}

// Defaults of RunHistoryPolicy.
const (
	DefaultRunHistoryLimit  = 100
	DefaultRunHistoryMaxAge = 7 * 24 * time.Hour
)

// WithDefaults returns p with zero fields set to the defaults.
func (p RunHistoryPolicy) WithDefaults() RunHistoryPolicy {
	if p.Limit <= 0 {
		p.Limit = DefaultRunHistoryLimit
	}
	if p.MaxAge <= 0 {
		p.MaxAge = DefaultRunHistoryMaxAge
	}
	return p
}

// String formats p as ParseRunHistory reads it.
func (p RunHistoryPolicy) String() string {
	if p.Off {
		return "off"
	}
	p = p.WithDefaults()
	return strconv.Itoa(p.Limit) + "," + p.MaxAge.String()
}

// ErrBadRunHistory is wrapped by ParseRunHistory's errors.
var ErrBadRunHistory = errors.New("runtime: bad run history setting")

// ParseRunHistory reads a run history setting: "off" (or "0") keeps none;
// "<runs>" keeps that many runs for the default 7 days; "<runs>,<max age>"
// ("100,168h", "500,24h") sets both; "" is the default, "100,168h".
func ParseRunHistory(s string) (RunHistoryPolicy, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return RunHistoryPolicy{}.WithDefaults(), nil
	case "off", "0", "false", "none":
		return RunHistoryPolicy{Off: true}, nil
	}
	runs, age, hasAge := strings.Cut(s, ",")
	n, err := strconv.Atoi(strings.TrimSpace(runs))
	if err != nil || n < 0 {
		return RunHistoryPolicy{}, fmt.Errorf("%w: %q: the number of runs must be a whole number such as 100 (format: RUNS[,MAX_AGE], e.g. 100,168h; or off)", ErrBadRunHistory, s)
	}
	if n == 0 {
		return RunHistoryPolicy{Off: true}, nil
	}
	p := RunHistoryPolicy{Limit: n}
	if hasAge {
		d, err := time.ParseDuration(strings.TrimSpace(age))
		if err != nil || d <= 0 {
			return RunHistoryPolicy{}, fmt.Errorf("%w: %q: the maximum age must be a positive Go duration such as 168h (format: RUNS[,MAX_AGE])", ErrBadRunHistory, s)
		}
		p.MaxAge = d
	}
	return p.WithDefaults(), nil
}

// outcomeOf classifies a finished run's error.
func outcomeOf(runErr, cancelCause error) RunOutcome {
	if runErr == nil {
		return OutcomeSucceeded
	}
	var oe OutcomeError
	if errors.As(runErr, &oe) {
		return oe.RunOutcome()
	}
	if cancelCause != nil && isPoolCause(cancelCause) {
		return OutcomeCancelled
	}
	return OutcomeFailed
}

// runErrorText is the error text a run record keeps: redacted and bounded.
func runErrorText(err error) string {
	if err == nil {
		return ""
	}
	s := redact.Text(err.Error())
	if len(s) > MaxRunErrorLen {
		cut := MaxRunErrorLen
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// utf8Start reports whether b starts a UTF-8 sequence.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
