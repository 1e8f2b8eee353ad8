package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// Coordinator is the part of runtime.Coordinator the engine calls, in the
// engine's types; runtime adapts its coordinator to it once per run.
type Coordinator interface {
	TryAcquireLease(ctx context.Context, pipelineID string, runNumber int64) (bool, error)
	ReleaseLease(ctx context.Context, pipelineID string) error
	CompleteLease(ctx context.Context, pipelineID string) error
	CurrentLease(pipelineID string) (Lease, bool)
}

// Capabilities holds what the engine uses of runtime.Capabilities; a nil
// field is a capability the coordinator lacks, with runtime's meaning.
type Capabilities struct {
	LocalLeaser          LocalLeaser
	BatchLeaser          BatchLeaser
	LeaseDeferrer        LeaseDeferrer
	LeaseAheader         LeaseAheader
	LeaseHolderReporter  LeaseHolderReporter
	CompletionReader     CompletionReader
	FleetController      Pauser
	RunRecorder          RunRecorder
	FailureSharer        FailureReader
	DeadlineReporter     DeadlineReporter
	SlotCompletionReader SlotCompletionReader
	Backfiller           Backfiller
}

// LocalLeaser is runtime.LocalLeaser in the engine's types.
type LocalLeaser interface {
	LocalLeases(pipelineID string) LocalLeases
}

// LocalLeases is runtime.LocalLeases in the engine's types.
type LocalLeases interface {
	Acquire(runNumber int64, now time.Time) (Lease, bool, error)
	Release(completed bool)
	Record(rec history.Record)
}

// BatchLeaser is runtime.BatchLeaser in the engine's types.
type BatchLeaser interface {
	TryAcquireLeases(ctx context.Context, reqs []LeaseRequest) []LeaseReply
}

// LeaseDeferrer is runtime.LeaseDeferrer in the engine's types.
type LeaseDeferrer interface {
	DeferLease(req LeaseRequest) time.Duration
}

// LeaseAheader is runtime.LeaseAheader; its method uses basic types only.
type LeaseAheader interface {
	LeaseAhead() time.Duration
}

// LeaseRequest is runtime.LeaseRequest with the same fields.
type LeaseRequest struct {
	PipelineID string
	RunNumber  int64
	Ahead      bool
}

// LeaseReply is runtime.LeaseReply with the same fields.
type LeaseReply struct {
	Acquired bool
	Err      error
}

// LeaseHolderReporter is runtime.LeaseHolderReporter in the engine's types.
type LeaseHolderReporter interface {
	LeaseHolder(ctx context.Context, pipelineID string) (Lease, bool, error)
}

// CompletionReader is runtime.CompletionReader.
type CompletionReader interface {
	LastCompleted(ctx context.Context, pipelineID string) (slot int64, ok bool, err error)
}

// Pauser is the part of runtime.FleetController the engine asks before
// each attempt.
type Pauser interface {
	Paused(pipelineID string) bool
}

// RunRecorder is runtime.RunRecorder.
type RunRecorder interface {
	FinishRun(ctx context.Context, rec history.Record) error
}

// FailureReader is the part of runtime.FailureSharer the engine reads.
type FailureReader interface {
	Failures(pipelineID string) (FailureState, bool)
}

// FailureState is runtime.FailureState with the same fields.
type FailureState struct {
	Count     int
	Until     time.Time
	Stopped   bool
	LastError string
}

// DeadlineReporter is runtime.DeadlineReporter.
type DeadlineReporter interface {
	MissedDeadline(ctx context.Context, pipelineID string, slot int64) (report bool, err error)
}

// SlotCompletionReader is runtime.SlotCompletionReader.
type SlotCompletionReader interface {
	SlotCompleted(ctx context.Context, pipelineID string, slot int64) (bool, error)
}

// RunObserver is runtime.RunObserver without ObservePipelines, which
// runtime calls itself.
type RunObserver interface {
	RunStarted(pipeline int, lateness time.Duration)
	RunEnded(pipeline int, took time.Duration)
}

// Clock is runtime.Clock in the engine's types.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is runtime.Timer.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Errors turns the errors whose types are runtime's (runtime.PanicError,
// runtime.FailingError) into what the engine needs of them, so that the
// errors a run returns are still runtime's types for errors.As.
type Errors struct {
	// Panic makes the error of a run whose factory, Run or Close panicked.
	Panic func(where string, value any, stack []byte) error
	// PanicStack reports whether err wraps such an error, with its stack.
	PanicStack func(err error) ([]byte, bool)
	// Failing reports whether err wraps a refusal for the fleet's failure
	// state, and that state.
	Failing func(err error) (FailureState, bool)
}

// panicked makes the error of a panic, runtime's when it says how.
func (e Errors) panicked(where string, value any, stack []byte) error {
	if e.Panic == nil {
		return &panicError{where: where, value: value, stack: stack}
	}
	return e.Panic(where, value, stack)
}

// panicStack returns the stack of the panic err wraps, if it wraps one.
func (e Errors) panicStack(err error) ([]byte, bool) {
	if e.PanicStack == nil {
		var pe *panicError
		if errors.As(err, &pe) {
			return pe.stack, true
		}
		return nil, false
	}
	return e.PanicStack(err)
}

// panicError is a panic's error when runtime gave no Errors.Panic, so an
// engine used on its own (its tests) still tells panics apart.
type panicError struct {
	where string
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic in %s: %v", e.where, e.value) }

// isPanic reports whether err comes from a panic.
func (e Errors) isPanic(err error) bool {
	_, ok := e.panicStack(err)
	return ok
}
