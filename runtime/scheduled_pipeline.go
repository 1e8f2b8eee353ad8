package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/runtime/internal/engine"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of the error policy.
const (
	// DefaultErrorBackoff is the first delay after a failed run.
	DefaultErrorBackoff = engine.DefaultErrorBackoff
	// MaxErrorBackoff caps the doubling backoff.
	MaxErrorBackoff = engine.MaxErrorBackoff
)

// ScheduledPipeline runs one pipeline on one schedule.
//
// Every attempt takes a lease from the coordinator (an in-process one when
// started alone), builds a fresh pipeline with Factory, runs it, closes it
// when it implements io.Closer, and gives the lease back: completed after a
// success, released after a failure. A factory error, a nil pipeline, a Run
// or Close error, and a panic in any of them is a failed run; panics are
// recovered and logged with their stack.
//
// After a failed run the next attempt waits ErrorBackoff, doubled per
// further consecutive failure and capped at MaxErrorBackoff; a cron pipeline
// retries the failed slot unless its next slot comes first. A success resets
// the count.
type ScheduledPipeline struct {
	// Factory builds a fresh pipeline before every run.
	Factory Factory
	// Schedule says when runs happen.
	Schedule Schedule
	// PipelineID names the pipeline in logs, leases and /status; it must be
	// unique within a pool.
	PipelineID string
	// ErrorBackoff is the delay after the first consecutive failure (default
	// DefaultErrorBackoff); it doubles per further failure up to MaxErrorBackoff.
	ErrorBackoff time.Duration
	// MaxConsecutiveErrors stops the pipeline, and Start returns the last
	// error, after this many failed runs in a row; 0 means never.
	MaxConsecutiveErrors int
	// Clock is the time source; nil means SystemClock. In a WorkerPool the
	// pool's clock is used.
	Clock Clock
	// CatchUp says what a cron pipeline does about missed slots (see
	// CatchUpPolicy); the zero value CatchUpSkip skips them. Other schedule
	// kinds ignore it.
	CatchUp CatchUpPolicy
	// RerunInterrupted re-runs a cron or Every slot whose holder died (or
	// was paused past its record's expiry) before completing it: the
	// worker that takes the pipeline's lease over runs that slot first,
	// with a new fencing token, then its own. Off by default; paired with
	// a fenced upsert sink, a slot's rows are as if it ran once. Only a
	// coordinator that takes leases over (one Redis, Sentinel) can tell;
	// a lease that lapses by its TTL instead is not re-run.
	RerunInterrupted bool
	// Grace is how late a cron slot may start and still run under
	// CatchUpSkip; 0 means LateSlotGrace.
	Grace time.Duration
	// Timeout bounds one run: a run still going after it has its context
	// cancelled with a cause wrapping ErrRunTimeout, counts as failed (even
	// if it then returns nil) and gives its lease back as any failed run
	// does. 0 means no limit.
	Timeout time.Duration
	// Deadline, for cron and every schedules, is how long after its fire
	// time a slot may take to succeed: a slot that has not succeeded
	// Deadline after it fired (its runs failed, were skipped while the
	// fleet backed off, stopped, or never started because every replica
	// was down or busy) is reported once as missed — once for the whole
	// fleet with a coordinator that has a DeadlineReporter (the Redis one,
	// the local one), once per worker otherwise — with a
	// notify.DeadlineMissed event, a WARN line and
	// agora_deadlines_missed_total. Nothing is reported while the pipeline
	// is paused. An every slot is the interval window its run starts in
	// (its run number). 0, the default, means no deadline; a negative one,
	// or one on a continuous or once schedule, is invalid.
	Deadline time.Duration
	// After names the pipelines this one depends on, by PipelineID: slot
	// S of this pipeline starts only once each of them completed slot S
	// (the same fire time; an every slot is its interval window),
	// fleet-wide, so a load never reads what its extract has not written
	// yet. Both must have the same schedule. The slot is waited for
	// without holding a lease or blocking other pipelines, asking the
	// coordinator every AfterPollInterval, for at most AfterTimeout; a
	// slot whose upstream has not completed by then is skipped with the
	// reason "upstream … has not completed slot …" (a WARN line,
	// notify.UpstreamNotCompleted, agora_attempts_skipped_total with
	// reason upstream, /status). An upstream must be registered in the
	// same pool, unless the coordinator is fleet-wide (the Redis one),
	// where it may run in another binary. Cron and every schedules only;
	// the coordinator must be a SlotCompletionReader.
	After []string
	// AfterTimeout is how long after a slot's fire time (or after it came
	// due, for a slot run late) the slot waits for its upstreams (After)
	// before it is skipped; 0 means until the next slot's fire time.
	// Longer than the interval, the slots after it start late, as after a
	// run that overran them. Only with After.
	AfterTimeout time.Duration
	// TracerProvider traces this pipeline's runs (see WithTracerProvider),
	// in place of the pool's; nil means the pool's, and untraced when
	// started alone. Start flushes it at the end; it is never shut down
	// by the pipeline.
	TracerProvider trace.TracerProvider

	active atomic.Pointer[engine.Runner]
}

// Start runs the pipeline on its schedule until Stop is called, ctx is
// cancelled, a Once schedule succeeds, or MaxConsecutiveErrors is reached. It
// blocks. It returns nil in the first three cases and an error wrapping
// ErrTooManyErrors and the last run's error in the fourth.
//
// Started alone, the pipeline runs in a WorkerPool of its own, so it is
// scheduled exactly as in any pool, with an in-process LocalCoordinator,
// slog.Default(), no health server and no signal handling. Cancelling ctx
// cancels a run in flight; Stop lets it finish and closes its
// ShutdownRequested channel. A pipeline registered with a WorkerPool is
// started by the pool, not by Start.
func (sp *ScheduledPipeline) Start(ctx context.Context) error {
	if problems := sp.problems(); len(problems) > 0 {
		return fmt.Errorf("%w: pipeline %q: %w", ErrInvalidPipeline, sp.PipelineID, errors.Join(problems...))
	}
	// One scheduler: a pool of this pipeline alone, whose runs see ctx's
	// cancellation, without a health server or signal handling.
	opts := []PoolOption{WithLogger(slog.Default()), WithSignalHandling(false), func(c *poolConfig) { c.alone = true }}
	if sp.Clock != nil {
		opts = append(opts, WithClock(sp.Clock))
	}
	return NewWorkerPool(opts...).Register(sp).Run(ctx)
}

// Stop ends the schedule: a sleeping scheduler wakes at once, a run in
// flight finishes and sees its ShutdownRequested channel closed. Stop of a
// pipeline that is not running does nothing.
func (sp *ScheduledPipeline) Stop() {
	if r := sp.active.Load(); r != nil {
		r.Stop()
	}
}

// problems lists every problem of sp's own settings.
func (sp *ScheduledPipeline) problems() []error {
	var errs []error
	if sp.PipelineID == "" {
		errs = append(errs, errors.New("empty PipelineID"))
	} else if err := ValidatePipelineID(sp.PipelineID); err != nil {
		errs = append(errs, err)
	}
	if sp.Factory == nil {
		errs = append(errs, errors.New("nil Factory"))
	}
	if err := sp.Schedule.Validate(); err != nil {
		errs = append(errs, err)
	}
	if sp.ErrorBackoff < 0 {
		errs = append(errs, fmt.Errorf("negative ErrorBackoff %s", sp.ErrorBackoff))
	}
	if sp.Timeout < 0 {
		errs = append(errs, fmt.Errorf("negative Timeout %s", sp.Timeout))
	}
	if err := sp.deadlineProblem(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, sp.afterProblems()...)
	if sp.Grace < 0 {
		errs = append(errs, fmt.Errorf("negative Grace %s", sp.Grace))
	}
	if sp.CatchUp > CatchUpAll {
		errs = append(errs, fmt.Errorf("unknown CatchUp policy %d", sp.CatchUp))
	}
	if sp.MaxConsecutiveErrors < 0 {
		errs = append(errs, fmt.Errorf("negative MaxConsecutiveErrors %d", sp.MaxConsecutiveErrors))
	}
	return errs
}
