package runtime

import (
	"errors"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// ErrLeaseLost is the cause (see context.Cause) of a run context cancelled
// because the coordinator reported the run's lease lost: another worker may
// now own the pipeline, so the run must stop writing.
var ErrLeaseLost = engine.ErrLeaseLost

// ErrAskAtSlot answers a LeaseRequest sent ahead of its slot (Ahead) that
// the coordinator did not decide: the pool asks again at the boundary.
var ErrAskAtSlot = engine.ErrAskAtSlot

// ErrGracefulTimeout is the cause of run contexts cancelled because runs were
// still in flight when the graceful shutdown timeout passed. WorkerPool.Run
// returns an error wrapping it in that case.
var ErrGracefulTimeout = engine.ErrGracefulTimeout

// ErrForcedShutdown is the cause of run contexts cancelled by a second
// interrupt. WorkerPool.Run returns an error wrapping it in that case, and
// worker.Main (or Main) exits with status 130.
var ErrForcedShutdown = engine.ErrForcedShutdown

// ErrInvalidPipeline is wrapped by every problem WorkerPool.Run finds when it
// validates the registered pipelines before starting any of them.
var ErrInvalidPipeline = errors.New("runtime: invalid pipeline")

// ErrAlreadyRunning is returned by ScheduledPipeline.Start and WorkerPool.Run
// when the pipeline or pool is already running.
var ErrAlreadyRunning = errors.New("runtime: already running")

// ErrTooManyErrors is wrapped, together with the last run error, by the
// error a pipeline stops with after MaxConsecutiveErrors failed runs in a row.
var ErrTooManyErrors = engine.ErrTooManyErrors

// ErrRunTimeout is the cause of a run context cancelled because the run
// took longer than its ScheduledPipeline.Timeout; the run's error wraps it.
var ErrRunTimeout = engine.ErrRunTimeout

// ErrStaleWrite is matched (errors.Is) by the error of a run whose write a
// fenced store refused because a newer fencing token had already written
// to it: another worker took the pipeline over. fencing.ErrStaleWriter, the
// error of agora's SQL sinks, matches it; a store of your own can wrap it.
// The pool counts such runs in agora_stale_writes_refused_total and tells
// its notifier (WithNotifier).
var ErrStaleWrite = engine.ErrStaleWrite
