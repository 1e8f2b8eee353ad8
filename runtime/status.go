package runtime

import (
	"encoding/json"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// PipelineState is what a pipeline is doing right now, as shown in /status.
type PipelineState uint8

// The pipeline states.
const (
	// StateIdle waits for the next scheduled run.
	StateIdle PipelineState = iota
	// StateRunning has a run in flight (lease, factory, Run, Close, release).
	StateRunning
	// StateBackoff waits before retrying after a failed run.
	StateBackoff
	// StateStopped will not run again: stopped, completed (Once) or failed
	// terminally.
	StateStopped
)

// String returns "idle", "running", "backoff" or "stopped".
func (s PipelineState) String() string {
	switch s {
	case StateRunning:
		return "running"
	case StateBackoff:
		return "backoff"
	case StateStopped:
		return "stopped"
	default:
		return "idle"
	}
}

// MarshalText makes the state a JSON string.
func (s PipelineState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// PipelineStatus is one pipeline's entry in /status.
type PipelineStatus struct {
	// PipelineID names the pipeline.
	PipelineID string `json:"pipeline_id"`
	// Schedule is the schedule in directive form, e.g. `cron="0 * * * *"`.
	Schedule string `json:"schedule"`
	// State is idle, running, backoff or stopped.
	State PipelineState `json:"state"`
	// Runs counts finished runs, successful or not.
	Runs uint64 `json:"runs"`
	// Failures counts failed runs.
	Failures uint64 `json:"failures"`
	// Skipped counts attempts skipped because the coordinator gave the lease
	// to another worker or the slot had already completed.
	Skipped uint64 `json:"skipped"`
	// MissedSlots counts cron slots not attempted because they were more than
	// LateSlotGrace late (a long previous run, a pause, a clock jump).
	MissedSlots uint64 `json:"missed_slots"`
	// LeaseErrors counts attempts skipped because the coordinator could not
	// be asked (fail-safe: no lease, no run).
	LeaseErrors uint64 `json:"lease_errors"`
	// ConsecutiveErrors counts failed runs since the last success.
	ConsecutiveErrors int `json:"consecutive_errors"`
	// RunningSince is when the run in flight started; nil when none is.
	RunningSince *time.Time `json:"running_since"`
	// LastRunStart is when the last finished run started; nil before the
	// first has finished. With LastRunEnd it always describes one run.
	LastRunStart *time.Time `json:"last_run_start"`
	// LastRunEnd is when the last finished run ended; nil before the first.
	LastRunEnd *time.Time `json:"last_run_end"`
	// LastError is the error of the last run, "" when it succeeded.
	LastError string `json:"last_error"`
	// NextRun is when the next attempt is due; nil while running or stopped.
	NextRun *time.Time `json:"next_run"`
	// RunNumber is the run number of the run in flight, 0 when none is.
	RunNumber int64 `json:"run_number"`
	// LeaseToken is the fencing token of the run in flight, 0 when none is
	// or the lease is unfenced.
	LeaseToken int64 `json:"lease_token"`
	// Paused is true while the pipeline is paused fleet-wide (see
	// FleetController): scheduled attempts are skipped.
	Paused bool `json:"paused"`
	// SkippedPaused counts attempts skipped because the pipeline was paused.
	SkippedPaused uint64 `json:"skipped_paused"`
	// Records totals the records every run so far moved, as the runs
	// reported them with CountRecords (zero for pipelines that do not).
	Records history.RecordCounts `json:"records"`
	// BackoffUntil is when the backoff after a failed run ends (the
	// fleet's, with a coordinator that shares failures); nil when the
	// pipeline is not backing off.
	BackoffUntil *time.Time `json:"backoff_until,omitempty"`
	// LastRun is the last run this worker finished, whichever replica ran
	// the ones since; nil before the first.
	LastRun *LastRunStatus `json:"last_run,omitempty"`
	// DeadlinesMissed counts the slots this worker reported as not having
	// succeeded within ScheduledPipeline.Deadline; with a coordinator that
	// reports fleet-wide, another replica may have reported the others.
	DeadlinesMissed uint64 `json:"deadlines_missed"`
	// LastMissedSlot is the fire time of the last slot this worker
	// reported as missing its deadline; nil before the first.
	LastMissedSlot *time.Time `json:"last_missed_slot,omitempty"`
	// SkippedUpstream counts the slots skipped because an upstream
	// (ScheduledPipeline.After) had not completed them within
	// AfterTimeout.
	SkippedUpstream uint64 `json:"skipped_upstream,omitempty"`
	// LastSkipReason says why the last such slot was skipped: `upstream
	// "extract" has not completed slot 2026-01-02T03:04:00Z`.
	LastSkipReason string `json:"last_skip_reason,omitempty"`
	// AwaitingUpstream is the slot (its fire time) waiting for its
	// upstreams right now; nil when none is.
	AwaitingUpstream *time.Time `json:"awaiting_upstream,omitempty"`
	// Outcomes splits the runs and skipped attempts by how they ended,
	// which alerts tell apart (a panic from an error, a lease held
	// elsewhere from a completed slot).
	Outcomes RunOutcomes `json:"outcomes"`
	// LeaseLost counts leases this worker lost while holding them
	// (expired, taken over, not renewable).
	LeaseLost uint64 `json:"lease_lost"`
	// StaleWritesRefused counts runs that failed because a fenced store
	// refused their write as stale (errors matching ErrStaleWrite).
	StaleWritesRefused uint64 `json:"stale_writes_refused"`
	// LastFencingToken is the token of the last lease this worker held,
	// which a fenced store compares writes with; 0 before any fenced
	// lease. LeaseToken is 0 between runs; this one is not.
	LastFencingToken int64 `json:"last_fencing_token"`
	// LastSuccess is when the last successful run on this worker ended;
	// nil before the first. A staleness alert compares it with now.
	LastSuccess *time.Time `json:"last_success,omitempty"`
	// BackfillDone, BackfillSkipped and BackfillFailed count the backfill
	// slots (Backfiller) this worker ran that succeeded, that it found
	// completed before (skipped), and that failed; BackfillRunning is how
	// many run now.
	BackfillDone    uint64 `json:"backfill_done,omitempty"`
	BackfillSkipped uint64 `json:"backfill_skipped,omitempty"`
	BackfillFailed  uint64 `json:"backfill_failed,omitempty"`
	BackfillRunning int    `json:"backfill_running,omitempty"`
}

// RunOutcomes counts one pipeline's finished runs by how they ended and
// the attempts skipped for reasons PipelineStatus does not count apart
// already (LeaseErrors, SkippedPaused, MissedSlots). A run refused
// because its slot was completed elsewhere counts in SkippedCompleted,
// not as a finished run.
type RunOutcomes struct {
	// Succeeded counts runs that returned nil.
	Succeeded uint64 `json:"succeeded"`
	// Errored counts runs whose factory, Run or Close failed.
	Errored uint64 `json:"errored"`
	// Panicked counts runs whose factory, Run or Close panicked.
	Panicked uint64 `json:"panicked"`
	// Cancelled counts runs the pool cancelled (lost lease, timeout,
	// shutdown).
	Cancelled uint64 `json:"cancelled"`
	// SkippedHeld counts attempts skipped because another worker held the
	// lease.
	SkippedHeld uint64 `json:"skipped_held"`
	// SkippedCompleted counts attempts skipped, or runs refused, because
	// the slot had already completed.
	SkippedCompleted uint64 `json:"skipped_completed"`
}

// LastRunStatus describes the last run a worker finished of a pipeline.
type LastRunStatus struct {
	// RunNumber is the run's slot (Unix seconds) or number.
	RunNumber int64 `json:"run_number"`
	// LeaseToken is its lease's fencing token, 0 when unfenced.
	LeaseToken int64 `json:"lease_token"`
	// Outcome is "succeeded", "failed" or "slot_done".
	Outcome history.Outcome `json:"outcome"`
	// End is when it ended.
	End time.Time `json:"end"`
}

// PoolStatus is the document served by /status.
type PoolStatus struct {
	// WorkerID names this worker.
	WorkerID string `json:"worker_id"`
	// State is "starting", "running", "shutting_down" or "stopped".
	State string `json:"state"`
	// Pipelines lists every registered pipeline in registration order.
	Pipelines []PipelineStatus `json:"pipelines"`
	// Coordinator is the coordinator's Status() when it implements
	// StatusReporter, otherwise omitted.
	Coordinator json.RawMessage `json:"coordinator,omitempty"`
}
