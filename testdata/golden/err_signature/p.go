// Package p declares factories with the wrong signature.
package p

import (
	"context"
	"time"
)

// Job runs.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// Value has Run on its pointer only.
type Value struct{}

// Run returns nil.
func (*Value) Run(context.Context) error { return nil }

// Sleeper has the wrong Run.
type Sleeper struct{}

// Run sleeps.
func (Sleeper) Run(d time.Duration) error { return nil }

// BuildNoContext takes no context.
//
//agora:schedule once
func BuildNoContext() (*Job, error) { return &Job{}, nil }

// BuildNoError returns no error.
//
//agora:schedule once
func BuildNoError(context.Context) *Job { return &Job{} }

// BuildNothing returns nothing.
//
//agora:schedule once
func BuildNothing(context.Context) {}

// BuildValue returns a value whose Run has a pointer receiver.
//
//agora:schedule once
func BuildValue(context.Context) (Value, error) { return Value{}, nil }

// BuildSleeper returns a type whose Run has the wrong signature.
//
//agora:schedule once
func BuildSleeper(context.Context) (Sleeper, error) { return Sleeper{}, nil }

// BuildString returns a string.
//
//agora:schedule once
func BuildString(context.Context) (string, error) { return "", nil }

// BuildVariadic takes contexts.
//
//agora:schedule once
func BuildVariadic(...context.Context) (*Job, error) { return &Job{}, nil }

// BuildAnon returns an unnamed interface.
//
//agora:schedule once
func BuildAnon(context.Context) (interface{ Run(context.Context) error }, error) { return &Job{}, nil }
