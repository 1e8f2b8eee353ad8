package engine

import (
	"errors"
	"time"
)

// minFleetBackoffWait is the least a refused worker waits before asking
// again, however little of the fleet's backoff was left: a refusal never
// turns into a loop of asks.
const minFleetBackoffWait = 50 * time.Millisecond

// fleetFailures returns the fleet's failure state the coordinator learned
// while giving the failed run's lease back; false with leases in memory
// (LocalLeaser), which are given back without asking the coordinator, or
// when it learned none.
func (r *Runner) fleetFailures() (FailureState, bool) {
	fs := r.env.caps.FailureSharer
	if fs == nil || r.env.local != nil {
		return FailureState{}, false
	}
	return fs.Failures(r.id())
}

// planFleetFailing plans the next attempt after the coordinator refused
// the lease for the fleet's failure state (runErr is its runtime.FailingError):
// the pipeline takes the fleet's count, and either waits out the fleet's
// backoff or, once the count reached MaxConsecutiveErrors, stops with the
// error a pipeline stops with after its own failed runs.
func (r *Runner) planFleetFailing(o outcome, runErr error, endN int64) (bool, error) {
	// Without a state (not a refusal runtime knows), the zero one.
	st, _ := r.env.failing(runErr)
	r.failures, r.retry = int32(st.Count), false
	if o == outcomeFleetStopped {
		last := errors.New(st.LastError)
		r.publish(o, runErr, endN, StateStopped)
		r.notifyStopped(last, st.Count)
		return true, &tooManyErrors{id: r.id(), failures: st.Count, last: last}
	}
	until := max(nsOf(st.Until), endN+int64(minFleetBackoffWait))
	r.next = until
	if r.sp.Schedule.Kind() == ScheduleCron {
		// The slot asked for is asked for again after the backoff, unless
		// its successor comes first, as after a failure here.
		following := r.followingSlot()
		r.retry = following == 0 || following > until
		if !r.retry && r.catchUpFrom() == 0 {
			r.next = r.nextCron(until - 1)
		}
	}
	r.publish(o, runErr, endN, StateBackoff)
	return false, nil
}
