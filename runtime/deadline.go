package runtime

import (
	"errors"
	"fmt"
	"time"
)

// Deadlines (ScheduledPipeline.Deadline): runtime checks the setting; the
// engine watches them (runtime/internal/engine/deadline.go).

// errDeadlineSchedule is the problem of a Deadline on a schedule without
// slots.
var errDeadlineSchedule = errors.New("deadline needs a cron or every schedule")

// deadlineProblem says what is wrong with sp's Deadline, nil when nothing.
func (sp *ScheduledPipeline) deadlineProblem() error {
	switch {
	case sp.Deadline < 0:
		return fmt.Errorf("negative Deadline %s", sp.Deadline)
	case sp.Deadline == 0:
		return nil
	}
	switch sp.Schedule.Kind() {
	case ScheduleCron:
		return nil
	case ScheduleEvery:
		if sp.Schedule.Interval() < time.Second {
			// Such runs are numbered by the coordinator, not by a slot
			// (everyRunNumber): there is no slot to check.
			return fmt.Errorf("%w of at least a second, not %s", errDeadlineSchedule, sp.Schedule.Interval())
		}
		return nil
	}
	return fmt.Errorf("%w, not %s", errDeadlineSchedule, sp.Schedule.String())
}
