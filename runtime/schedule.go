package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/cronspec"
)

// ErrInvalidSchedule is wrapped by every error about a schedule that cannot be
// used: a cron expression that does not parse, a non-positive Every.
var ErrInvalidSchedule = errors.New("runtime: invalid schedule")

// ScheduleKind says how a Schedule picks the time of the next run.
type ScheduleKind uint8

// The schedule kinds. The zero Schedule has kind ScheduleNone and is rejected
// by WorkerPool validation.
const (
	ScheduleNone ScheduleKind = iota
	ScheduleEvery
	ScheduleCron
	ScheduleContinuous
	ScheduleOnce
)

// String returns the kind's name as used in directives and /status.
func (k ScheduleKind) String() string {
	switch k {
	case ScheduleEvery:
		return "every"
	case ScheduleCron:
		return "cron"
	case ScheduleContinuous:
		return "continuous"
	case ScheduleOnce:
		return "once"
	default:
		return "none"
	}
}

// Schedule says when a pipeline runs. Build one with Every, Cron, MustCron,
// Continuous or Once; the zero value is not a usable schedule.
type Schedule struct {
	kind  ScheduleKind
	every time.Duration
	expr  string
	spec  cronspec.Spec
}

// Every returns a schedule whose timer starts when a run finishes: with
// Every(time.Hour) a run that takes 45 minutes is followed by the next one
// 1h45m after the first started. d must be positive; WorkerPool validation
// rejects anything else.
func Every(d time.Duration) Schedule {
	return Schedule{kind: ScheduleEvery, every: d}
}

// Cron parses a cron expression into a wall-clock schedule. It accepts the
// standard five fields ("0 * * * *"), an optional leading seconds field
// ("*/10 * * * * *"), descriptors (@hourly, @daily, @every 5m) and a
// CRON_TZ=Zone prefix ("CRON_TZ=Europe/Paris 30 2 * * *"). Without a prefix
// times are in the process's local zone (time.Local), whatever the location
// of the time given to Next.
//
// On daylight saving days a job whose local time is skipped runs once when
// the clocks have gone forward, and a job whose local time happens twice runs
// at the first occurrence only; a job whose hour field is every hour ("*/15 *
// * * *", "@hourly") simply follows the wall clock. docs/schedules.md has
// worked examples.
//
// "@every d" fires at multiples of d counted from the Unix epoch, not from
// process start, so every replica of a fleet names the same slot the same way;
// d must be a whole number of seconds, at least 1s.
func Cron(expr string) (Schedule, error) {
	trimmed := strings.TrimSpace(expr)
	if trimmed == "" {
		return Schedule{}, fmt.Errorf("%w: cron expression %q is empty", ErrInvalidSchedule, expr)
	}
	spec, err := cronspec.Parse(trimmed)
	if err != nil {
		return Schedule{}, fmt.Errorf("%w: cron expression %q: %w", ErrInvalidSchedule, expr, err)
	}
	return Schedule{kind: ScheduleCron, expr: trimmed, spec: spec}, nil
}

// MustCron is Cron for expressions written as literals in source code; it
// panics when expr does not parse. agoragen checks literals before they
// reach it.
func MustCron(expr string) Schedule {
	s, err := Cron(expr)
	if err != nil {
		panic(err)
	}
	return s
}

// Continuous returns a schedule that starts the next run as soon as the
// previous one returns, for consumers that loop.
func Continuous() Schedule { return Schedule{kind: ScheduleContinuous} }

// Once returns a schedule that runs a pipeline until one run succeeds and then
// stops it. Failed runs are retried under the pipeline's error policy.
func Once() Schedule { return Schedule{kind: ScheduleOnce} }

// Kind reports which kind of schedule s is.
func (s Schedule) Kind() ScheduleKind { return s.kind }

// IsZero reports whether s is the zero Schedule, which cannot run.
func (s Schedule) IsZero() bool { return s.kind == ScheduleNone }

// Interval returns the duration of an Every schedule and 0 for other kinds.
func (s Schedule) Interval() time.Duration {
	if s.kind == ScheduleEvery {
		return s.every
	}
	return 0
}

// Expr returns the expression of a cron schedule and "" for other kinds.
func (s Schedule) Expr() string { return s.expr }

// String describes s the way directives write it: "every=1h0m0s",
// `cron="0 * * * *"`, "continuous" or "once".
func (s Schedule) String() string { return s.engine().String() }

// Validate reports why s cannot be run, or nil.
func (s Schedule) Validate() error {
	switch s.kind {
	case ScheduleNone:
		return fmt.Errorf("%w: no schedule set", ErrInvalidSchedule)
	case ScheduleEvery:
		if s.every <= 0 {
			return fmt.Errorf("%w: every=%s must be positive", ErrInvalidSchedule, s.every)
		}
	case ScheduleCron:
		if s.spec == nil {
			return fmt.Errorf("%w: cron schedule built without Cron", ErrInvalidSchedule)
		}
	}
	return nil
}

// Next returns the time of the first run strictly after after for cron
// schedules, and after+interval for Every (after being when the previous run
// finished). Continuous and Once return after itself: they run again at
// once. The zero Schedule, and a cron expression that can never fire (such as
// "0 0 30 2 *"), return the zero time.
func (s Schedule) Next(after time.Time) time.Time { return s.engine().Next(after) }
