package history

// Outcome is how a run that started ended, as the run history records it.
type Outcome string

// The outcomes of a run.
const (
	// OutcomeSucceeded: Run returned nil.
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeFailed: Run (or its factory or Close) returned an error.
	OutcomeFailed Outcome = "failed"
	// OutcomeCancelled: the run's context was cancelled by the pool (a lost
	// lease, a shutdown's timeout, a forced shutdown) and the run ended
	// with an error.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeStale: a fenced sink refused the run's writes because a newer
	// fencing token had written already (an error carrying this outcome,
	// such as fencing's StaleWriterError).
	OutcomeStale Outcome = "stale"
	// OutcomeSlotDone: a fenced sink refused the run's writes because its
	// slot was already written by another run of it.
	OutcomeSlotDone Outcome = "slot_done"
)

// OutcomeError is implemented by errors that decide the outcome a failed
// run is recorded with, so that packages the runtime does not know (the
// fenced sinks) can name theirs. The pool looks for one along the error's
// chain (errors.As).
type OutcomeError interface {
	error
	RunOutcome() Outcome
}
