// Package notify tells people that a pipeline needs attention: it POSTs a
// JSON Event to a webhook when a pipeline stops after MaxConsecutiveErrors
// failed runs, when a fenced store refuses a run's write as stale, when a
// slot has not succeeded within its pipeline's deadline, and, when asked
// for, when any run fails.
//
// A WorkerPool given a Notifier (runtime.WithNotifier) calls Notify from
// the run's goroutine, so Notify never blocks: the Webhook puts the event
// in a bounded queue that one goroutine sends from, retrying with
// exponential backoff a bounded number of times. An event that finds the
// queue full is dropped and counted; so is one that fails every attempt,
// and the failure is logged with the webhook's URL reduced to its scheme
// and host (webhook URLs carry their secret in the path).
package notify

import "time"

// Kind says what happened.
type Kind string

// The kinds of event.
const (
	// PipelineStopped: the pipeline failed MaxConsecutiveErrors runs in a
	// row and will not run again until the worker restarts.
	PipelineStopped Kind = "pipeline_stopped"
	// RunFailed: a run failed (sent only with Options.OnFailure).
	RunFailed Kind = "run_failed"
	// StaleWriteRefused: a fenced store refused the run's write because a
	// newer fencing token had written (runtime.ErrStaleWrite).
	StaleWriteRefused Kind = "stale_write_refused"
	// DeadlineMissed: a cron or every slot had not succeeded within the
	// pipeline's deadline (runtime.ScheduledPipeline.Deadline) of its fire
	// time. RunNumber is the slot (its fire time in Unix seconds), Deadline
	// the deadline, Error says which slot in words. Sent once per slot for
	// the fleet with a coordinator that reports deadlines fleet-wide (the
	// Redis one), by the worker that found it; never while the pipeline is
	// paused.
	DeadlineMissed Kind = "deadline_missed"
	// UpstreamNotCompleted: a slot of a pipeline with dependencies
	// (runtime.ScheduledPipeline.After) was skipped because an upstream
	// had not completed the same slot in time. RunNumber is the slot (its
	// fire time in Unix seconds), Upstream the pipeline waited for, Error
	// the reason ("upstream … has not completed slot …"). Sent by the
	// worker that skipped it.
	UpstreamNotCompleted Kind = "upstream_not_completed"
)

// Event is what the webhook receives, as a JSON object.
type Event struct {
	// Kind is what happened.
	Kind Kind `json:"event"`
	// PipelineID names the pipeline.
	PipelineID string `json:"pipeline_id"`
	// WorkerID names the worker that saw it.
	WorkerID string `json:"worker_id"`
	// RunNumber is the run's number (0 when the event is not about one run).
	RunNumber int64 `json:"run_number,omitempty"`
	// FencingToken is the run's fencing token, 0 for an unfenced lease.
	FencingToken int64 `json:"fencing_token,omitempty"`
	// ConsecutiveErrors counts the failed runs in a row so far.
	ConsecutiveErrors int `json:"consecutive_errors"`
	// Error is the run's error, with secrets redacted.
	Error string `json:"error,omitempty"`
	// Deadline is the pipeline's deadline as a Go duration ("15m0s"), set
	// for DeadlineMissed only.
	Deadline string `json:"deadline,omitempty"`
	// Upstream names the pipeline a skipped slot waited for, set for
	// UpstreamNotCompleted only.
	Upstream string `json:"upstream,omitempty"`
	// Time is when it happened.
	Time time.Time `json:"time"`
}

// Notifier receives the pool's events. Notify must return at once: it is
// called from the goroutine of the run the event is about.
type Notifier interface {
	Notify(Event)
}
