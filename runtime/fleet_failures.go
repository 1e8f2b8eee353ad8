package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// FailureSharer is the capability (Capabilities.FailureSharer) of
// coordinators that keep a pipeline's consecutive failed runs, its backoff
// deadline and its last error with its coordination state, so that a fleet
// counts failures and backs off as one scheduler: a failing pipeline is
// attempted once per backoff step by one replica, and
// MaxConsecutiveErrors counts the fleet's attempts. Such a coordinator
// records a failed run together with giving its lease back, and refuses a
// lease while the pipeline backs off (or after it stopped) with a
// *FailingError. Without it every replica counts and backs off alone.
type FailureSharer interface {
	// ShareFailures receives, before Start, the failure rules of every
	// pipeline that has a schedule; the coordinator applies them when it
	// records a failed run.
	ShareFailures(rules map[string]FailureRules)
	// Failures returns the fleet's failure state of pipelineID as learned
	// when this worker last gave a failed run's lease back, without asking
	// anyone; false when that give-back did not learn it (Redis did not
	// answer), and the pool counts the failure on its own.
	Failures(pipelineID string) (FailureState, bool)
}

// FailureRules are a pipeline's rules for failed runs
// (ScheduledPipeline.MaxConsecutiveErrors and ErrorBackoff).
type FailureRules struct {
	// MaxConsecutiveErrors stops the pipeline after this many failed runs
	// in a row; 0 never stops it.
	MaxConsecutiveErrors int
	// ErrorBackoff is the first backoff; it doubles per further failure up
	// to MaxErrorBackoff. 0 means DefaultErrorBackoff.
	ErrorBackoff time.Duration
}

// Backoff returns the wait after the failures-th consecutive failed run.
func (fr FailureRules) Backoff(failures int) time.Duration {
	return engine.BackoffDelay(fr.ErrorBackoff, failures)
}

// FailureState is a pipeline's failure state, fleet-wide.
type FailureState struct {
	// Count is the number of consecutive failed runs.
	Count int
	// Until is when the backoff ends, by this worker's clock; zero when the
	// pipeline is not backing off.
	Until time.Time
	// Stopped is set once Count reached MaxConsecutiveErrors: the pipeline
	// stops on every replica.
	Stopped bool
	// LastError is the last failed run's error text.
	LastError string
}

// ErrBackingOff is wrapped by the *FailingError a coordinator refuses a
// lease with while the pipeline backs off after a failed run somewhere in
// the fleet.
var ErrBackingOff = errors.New("runtime: backing off after a failed run")

// FailingError is the error TryAcquireLease (or a LeaseReply) refuses a
// lease with because of the fleet's failure state: the pipeline backs off
// until State.Until, or (State.Stopped) it reached MaxConsecutiveErrors and
// stops. It wraps ErrBackingOff, or ErrTooManyErrors when stopped.
type FailingError struct {
	PipelineID string
	State      FailureState
}

// Error says which pipeline is refused, why, and its last error.
func (e *FailingError) Error() string {
	if e.State.Stopped {
		return fmt.Sprintf("runtime: pipeline %q stopped after %d consecutive failed runs in the fleet: %s",
			e.PipelineID, e.State.Count, e.State.LastError)
	}
	return fmt.Sprintf("runtime: pipeline %q backing off after %d consecutive failed runs in the fleet (until %s): %s",
		e.PipelineID, e.State.Count, e.State.Until.UTC().Format(time.RFC3339Nano), e.State.LastError)
}

// Unwrap returns ErrTooManyErrors when stopped, ErrBackingOff otherwise.
func (e *FailingError) Unwrap() error {
	if e.State.Stopped {
		return ErrTooManyErrors
	}
	return ErrBackingOff
}

// failureRules gathers the failure rules of pipelines for a FailureSharer.
func failureRules(sps []*ScheduledPipeline) map[string]FailureRules {
	out := make(map[string]FailureRules, len(sps))
	for _, sp := range sps {
		out[sp.PipelineID] = FailureRules{MaxConsecutiveErrors: sp.MaxConsecutiveErrors, ErrorBackoff: sp.ErrorBackoff}
	}
	return out
}
