package runtime

import (
	"errors"
	"fmt"
)

// PanicError is the error of a run whose factory, Run or Close panicked.
type PanicError struct {
	// Where is "factory", "Run" or "Close".
	Where string
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

// Error describes the panic without the stack, which is logged separately.
func (e *PanicError) Error() string { return fmt.Sprintf("panic in %s: %v", e.Where, e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// newPanicError and panicStack are the engine's view of PanicError (see
// engine.Errors): the engine recovers the panic, runtime names its type.
func newPanicError(where string, value any, stack []byte) error {
	return &PanicError{Where: where, Value: value, Stack: stack}
}

func panicStack(err error) ([]byte, bool) {
	var pe *PanicError
	if errors.As(err, &pe) {
		return pe.Stack, true
	}
	return nil, false
}
