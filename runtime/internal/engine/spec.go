package engine

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agora-etl/agora/internal/cronspec"
)

// Pipeline is runtime.Pipeline.
type Pipeline interface {
	Run(ctx context.Context) error
}

// Spec is what the engine runs of one runtime.ScheduledPipeline: its
// settings, copied once as the pipeline starts (a registered pipeline's
// fields must not change), under runtime's names and meanings.
type Spec struct {
	Factory              func(context.Context) (Pipeline, error)
	Schedule             Schedule
	PipelineID           string
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

// Schedule is a runtime.Schedule as the engine reads it; its text is
// computed once, since the status and logs ask for it often.
type Schedule struct {
	kind  ScheduleKind
	every time.Duration
	spec  cronspec.Spec
	text  string
}

// NewSchedule returns the schedule of kind with an Every interval, a cron
// spec and text, the schedule's String.
func NewSchedule(kind ScheduleKind, every time.Duration, spec cronspec.Spec, text string) Schedule {
	return Schedule{kind: kind, every: every, spec: spec, text: text}
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

// String is runtime.Schedule.String.
func (s Schedule) String() string { return s.text }

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
