package history

import (
	"time"

	"github.com/agora-etl/agora/internal/redact"
)

// Record is what the run history keeps of one run: the same fields
// whichever coordinator keeps it, so that `fleet runs`, the dashboard and
// a Go reader see one shape.
type Record struct {
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
	Outcome Outcome `json:"outcome"`
	// Error is the run's error text as ErrorText makes it: passwords
	// redacted, cut to MaxErrorLen bytes; empty after a success.
	Error string `json:"error,omitempty"`
	// Records are the records it moved (record pipelines).
	Records RecordCounts `json:"records"`
	// Triggered is true for a run an operator asked for (a trigger, RunNow),
	// false for a scheduled one.
	Triggered bool `json:"triggered"`
	// Backfill is true for a run of a backfill's slot (fleet backfill,
	// fleet trigger --slot); Triggered is false for it.
	Backfill bool `json:"backfill,omitempty"`
	// Params are the parameters a trigger gave the run
	// (runtime.ParamsFromContext); nil for a scheduled run.
	Params map[string]string `json:"params,omitempty"`
}

// MaxErrorLen bounds the error text a Record keeps, so that one run with
// a huge error cannot swell a pipeline's history.
const MaxErrorLen = 2048

// ErrorText is the error text a Record keeps of err: passwords redacted by
// the rule the logs use, cut to MaxErrorLen bytes (at a character's
// start, with "…" after the cut); "" for nil.
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	s := redact.Text(err.Error())
	if len(s) > MaxErrorLen {
		cut := MaxErrorLen
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// utf8Start reports whether b starts a UTF-8 sequence.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
