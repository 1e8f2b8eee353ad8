package engine

import (
	"errors"

	"github.com/agora-etl/agora/runtime/history"
)

// outcomeOf classifies a finished run's error.
func outcomeOf(runErr, cancelCause error) history.Outcome {
	if runErr == nil {
		return history.OutcomeSucceeded
	}
	var oe history.OutcomeError
	if errors.As(runErr, &oe) {
		return oe.RunOutcome()
	}
	if cancelCause != nil && isPoolCause(cancelCause) {
		return history.OutcomeCancelled
	}
	return history.OutcomeFailed
}
