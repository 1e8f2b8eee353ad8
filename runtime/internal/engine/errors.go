package engine

import "errors"

// The sentinels the engine reports. runtime's exported errors are these
// values (runtime.ErrLeaseLost is ErrLeaseLost), documented there, so
// errors.Is matches across runtime, the engine and every coordinator.
var (
	// ErrLeaseLost is the cause of a run cancelled for a lost lease.
	ErrLeaseLost = errors.New("runtime: lease lost")
	// ErrNotReprocessable fails a reprocessed backfill slot whose pipeline
	// does not replace a slot's output.
	ErrNotReprocessable = errors.New("runtime: reprocess refused: the pipeline does not say a re-run of a slot replaces its output (its sinks must upsert, or replace the slot's rows: runtime.SlotReplacer)")
	// ErrAskAtSlot answers an ahead request the coordinator did not decide.
	ErrAskAtSlot = errors.New("runtime: ask again at the slot's boundary")
	// ErrGracefulTimeout is the cause of runs cancelled after the graceful timeout.
	ErrGracefulTimeout = errors.New("runtime: graceful shutdown timed out")
	// ErrForcedShutdown is the cause of runs cancelled by a second interrupt.
	ErrForcedShutdown = errors.New("runtime: forced shutdown")
	// ErrTooManyErrors is wrapped by the error of a pipeline stopped for its failures.
	ErrTooManyErrors = errors.New("runtime: too many consecutive errors")
	// ErrRunTimeout is the cause of a run cancelled for its timeout.
	ErrRunTimeout = errors.New("runtime: run timed out")
	// ErrSlotCompleted refuses a lease, or a run, whose slot already completed.
	ErrSlotCompleted = errors.New("runtime: slot already completed")
	// ErrNilPipeline is a factory's nil pipeline without an error.
	ErrNilPipeline = errors.New("runtime: factory returned a nil pipeline")
	// ErrStaleWrite is matched by a write a fenced store refused.
	ErrStaleWrite = errors.New("runtime: write refused as stale")
	// ErrLeaseHeld is RunNow's error for a lease another worker holds.
	ErrLeaseHeld = errors.New("runtime: lease held by another worker")
	// ErrRunFailed is matched by RunNow's error for a run that failed.
	ErrRunFailed = errors.New("runtime: the run failed")
)
