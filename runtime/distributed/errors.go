package distributed

import (
	"errors"

	"github.com/agora-etl/agora/runtime"
)

// ErrInvalidConfig is wrapped by every error about a setting that cannot be
// used. The message names the setting (the Options field, or the
// AGORA_DISTRIBUTED_* variable when it came from LoadConfig) and never shows
// a password.
var ErrInvalidConfig = errors.New("distributed: invalid configuration")

// ErrLeaseNotHeld is runtime.ErrLeaseNotHeld, the one sentinel for a lease
// this worker does not hold, kept under this name so that callers of
// either package match the same value with errors.Is. ReleaseLease,
// CompleteLease and RenewLease wrap it when this worker does not hold the
// pipeline's lease (never acquired, already released, expired or taken
// over). Releasing such a lease changes nothing in Redis.
var ErrLeaseNotHeld = runtime.ErrLeaseNotHeld

// ErrNotStarted is returned by lease operations before Start, and after Stop:
// a lease needs the worker id that Start registers.
var ErrNotStarted = errors.New("distributed: coordinator not started")

// ErrAlreadyStarted is returned by Start on a coordinator that is running.
var ErrAlreadyStarted = errors.New("distributed: coordinator already started")

// ErrClosed is returned by every operation after Close.
var ErrClosed = errors.New("distributed: coordinator closed")

// ErrInvalidRunNumber is returned by TryAcquireLease for a run number below
// runtime.RunNumberOnce.
var ErrInvalidRunNumber = errors.New("distributed: invalid run number")

// ErrInvalidControl is the error of a pause, resume or trigger whose
// options are out of bounds (see MaxReasonBytes); nothing was changed.
var ErrInvalidControl = errors.New("distributed: invalid control request")
