package runtime

import (
	"context"
	"errors"
	"time"
)

// Defaults of the error policy.
const (
	// DefaultErrorBackoff is the first delay after a failed run.
	DefaultErrorBackoff = 60 * time.Second
	// MaxErrorBackoff caps the doubling backoff.
	MaxErrorBackoff = 10 * time.Minute
)

// ScheduledPipeline runs one pipeline on one schedule.
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
	// Clock is the time source; nil means SystemClock.
	Clock Clock
}

// Start runs the pipeline on its schedule until Stop is called, ctx is
// cancelled, a Once schedule succeeds, or MaxConsecutiveErrors is reached. It
// blocks.
func (sp *ScheduledPipeline) Start(ctx context.Context) error {
	return errors.New("runtime: not implemented")
}

// Stop ends the schedule: a sleeping scheduler wakes at once, a run in flight
// finishes.
func (sp *ScheduledPipeline) Stop() {}
