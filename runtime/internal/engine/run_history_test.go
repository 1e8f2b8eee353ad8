package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/agora-etl/agora/runtime/history"
)

func TestOutcomeOf(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		err, cause error
		want       history.Outcome
	}{
		{nil, nil, history.OutcomeSucceeded},
		{boom, nil, history.OutcomeFailed},
		{boom, ErrLeaseLost, history.OutcomeCancelled},
		{boom, context.Canceled, history.OutcomeFailed}, // not the pool's cause
	} {
		if got := outcomeOf(tc.err, tc.cause); got != tc.want {
			t.Errorf("outcomeOf(%v, %v) = %v, want %v", tc.err, tc.cause, got, tc.want)
		}
	}
}
