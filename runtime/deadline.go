package runtime

import (
	"errors"
	"fmt"
	"time"
)

// Deadlines (ScheduledPipeline.Deadline) are watched by one goroutine per
// pool, started only when a pipeline has one, with a heap holding one
// entry per such pipeline: the next slot to check and when. Slots are
// checked in order, each at its fire time plus the deadline, so a pipeline
// never has more than one check pending, and a pipeline without a
// deadline costs nothing: no entry, no field, no timer. The counts a miss
// makes live in the runner's rare state, made at the first miss.
//
// The check is separate from the runs on purpose: a slot that never ran
// (every replica down, the run still going, the fleet backing off) is
// exactly what a deadline is for, and has no run to hang the check on.

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
