package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestErrorsWithoutHooks: an engine given no Errors still names a panic and
// tells it apart, and finds no fleet failure state.
func TestErrorsWithoutHooks(t *testing.T) {
	var e Errors
	if err := e.panicked("Run", "boom", nil); err == nil || !strings.Contains(err.Error(), "panic in Run: boom") {
		t.Fatalf("panicked = %v", err)
	}
	if e.isPanic(errors.New("x")) || !e.isPanic(fmt.Errorf("wrapped: %w", e.panicked("Run", 1, nil))) {
		t.Fatal("the engine's own panic error is not told apart")
	}
	env := &runEnv{}
	if _, ok := env.failing(errors.New("x")); ok {
		t.Fatal("a failure state without Errors.Failing")
	}
}

type stackErr struct{ stack []byte }

func (e stackErr) Error() string { return "panicked" }

func TestErrorsHooks(t *testing.T) {
	e := Errors{
		Panic: func(where string, v any, stack []byte) error { return stackErr{stack} },
		PanicStack: func(err error) ([]byte, bool) {
			var se stackErr
			if errors.As(err, &se) {
				return se.stack, true
			}
			return nil, false
		},
		Failing: func(err error) (FailureState, bool) { return FailureState{Count: 3}, errors.Is(err, ErrTooManyErrors) },
	}
	err := e.panicked("factory", 1, []byte("s"))
	if stack, ok := e.panicStack(err); !ok || string(stack) != "s" || !e.isPanic(err) {
		t.Fatalf("panicStack = %q, %v", stack, ok)
	}
	if e.runStatus(err, nil) != RunStatusPanic || e.runStatus(nil, nil) != RunStatusSuccess ||
		e.runStatus(errors.New("x"), ErrLeaseLost) != RunStatusCancelled || e.runStatus(errors.New("x"), nil) != RunStatusError {
		t.Fatal("runStatus misclassifies")
	}
	env := &runEnv{errs: e}
	if st, ok := env.failing(ErrTooManyErrors); !ok || st.Count != 3 {
		t.Fatalf("failing = %+v, %v", st, ok)
	}
}
