package engine

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agora-etl/agora/internal/cronspec"
)

// Pipeline is runtime.Pipeline.
type Pipeline interface {
	Run(ctx context.Context) error
}

// Spec is what the engine runs of one runtime.ScheduledPipeline, under
// runtime's names and meanings, copied once as the pipeline starts (a
// registered pipeline's fields must not change). A pool keeps one per
// pipeline, so what every run reads is here and the settings few
// pipelines use are behind Settings, which the pipelines without any
// share.
type Spec struct {
	Factory    Factory
	Schedule   Schedule
	PipelineID string
	*Settings
}

// Settings are a Spec's settings that runs read only on their rarer paths
// (failures, catch-up, timeouts, deadlines, After, tracing).
type Settings struct {
	ErrorBackoff         time.Duration
	MaxConsecutiveErrors int
	CatchUp              CatchUpPolicy
	RerunInterrupted     bool
	Grace                time.Duration
	Timeout              time.Duration
	Deadline             time.Duration
	After                []string
	AfterTimeout         time.Duration
	TracerProvider       trace.TracerProvider
}

// Factory builds a fresh pipeline before every run (runtime.Factory). An
// interface rather than a func, so that runtime hands over its Factory,
// a func of its own types, without a closure per pipeline.
type Factory interface {
	Build(ctx context.Context) (Pipeline, error)
}

// FactoryFunc is a Factory of the engine's own types.
type FactoryFunc func(ctx context.Context) (Pipeline, error)

// Build calls f.
func (f FactoryFunc) Build(ctx context.Context) (Pipeline, error) { return f(ctx) }

// CatchUpPolicy is runtime.CatchUpPolicy.
type CatchUpPolicy uint8

// The catch-up policies, with runtime's values.
const (
	CatchUpSkip CatchUpPolicy = iota
	CatchUpLatest
	CatchUpAll
)

// ScheduleKind is runtime.ScheduleKind.
type ScheduleKind uint8

// The schedule kinds, with runtime's values.
const (
	ScheduleNone ScheduleKind = iota
	ScheduleEvery
	ScheduleCron
	ScheduleContinuous
	ScheduleOnce
)

// Schedule is a runtime.Schedule as the engine reads it, and what
// runtime's String and Next are made of.
type Schedule struct {
	kind  ScheduleKind
	every time.Duration
	expr  string
	spec  cronspec.Spec
}

// NewSchedule returns the schedule of kind with an Every interval, or a
// cron expression and its parsed spec.
func NewSchedule(kind ScheduleKind, every time.Duration, expr string, spec cronspec.Spec) Schedule {
	return Schedule{kind: kind, every: every, expr: expr, spec: spec}
}

// Kind reports the schedule's kind.
func (s Schedule) Kind() ScheduleKind { return s.kind }

// Interval returns an Every schedule's interval, 0 for other kinds.
func (s Schedule) Interval() time.Duration {
	if s.kind == ScheduleEvery {
		return s.every
	}
	return 0
}

// String is runtime.Schedule.String: the schedule as directives write it.
func (s Schedule) String() string {
	switch s.kind {
	case ScheduleEvery:
		return "every=" + s.every.String()
	case ScheduleCron:
		return fmt.Sprintf("cron=%q", s.expr)
	case ScheduleContinuous:
		return "continuous"
	case ScheduleOnce:
		return "once"
	default:
		return "none"
	}
}

// Next is runtime.Schedule.Next.
func (s Schedule) Next(after time.Time) time.Time {
	switch s.kind {
	case ScheduleEvery:
		return after.Add(s.every)
	case ScheduleCron:
		if s.spec == nil {
			return time.Time{}
		}
		return s.spec.Next(after)
	case ScheduleContinuous, ScheduleOnce:
		return after
	default:
		return time.Time{}
	}
}
