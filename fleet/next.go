package fleet

import (
	"time"

	"github.com/agora-etl/agora/runtime"
)

// nextFire is a cron schedule's next slot after now. Every, Continuous and
// Once pipelines have none that the fleet can tell: an Every interval runs
// from the end of the previous run.
func nextFire(schedule string, now time.Time) (time.Time, bool) {
	s, err := runtime.ParseSchedule(schedule)
	if err != nil || s.Kind() != runtime.ScheduleCron {
		return time.Time{}, false
	}
	next := s.Next(now)
	return next.UTC(), !next.IsZero()
}
