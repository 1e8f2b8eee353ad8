package engine

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

// failingRefusal is a refusal for the fleet's failure state, as runtime's
// *FailingError is one.
type failingRefusal struct{ st FailureState }

func (e failingRefusal) Error() string { return "failing: " + e.st.LastError }

func fleetErrors() Errors {
	return Errors{Failing: func(err error) (FailureState, bool) {
		var f failingRefusal
		if errors.As(err, &f) {
			return f.st, true
		}
		return FailureState{}, false
	}}
}

func TestPlanFleetFailing(t *testing.T) {
	env := testEnv(systemClock{}, slog.New(slog.DiscardHandler))
	env.errs = fleetErrors()
	r := newRunner(&Spec{PipelineID: "p", Schedule: every(time.Minute)}, env)
	end := time.Unix(1000, 0)
	until := end.Add(time.Hour)
	done, err := r.plan(outcomeBackingOff, failingRefusal{FailureState{Count: 2, Until: until, LastError: "boom"}}, end)
	if done || err != nil || r.failures != 2 || r.next != until.UnixNano() {
		t.Fatalf("backing off: done %v err %v failures %d next %v", done, err, r.failures, timeOf(r.next))
	}
	if st := r.status(); st.State != StateBackoff || st.LastError != "boom" || st.ConsecutiveErrors != 2 {
		t.Fatalf("status while backing off: %+v", st)
	}
	// Almost over: the worker still waits minFleetBackoffWait.
	r.plan(outcomeBackingOff, failingRefusal{FailureState{Count: 2, Until: end}}, end)
	if r.next != end.UnixNano()+int64(minFleetBackoffWait) {
		t.Fatalf("next %v, want the least wait after %v", timeOf(r.next), end)
	}
	done, err = r.plan(outcomeFleetStopped, failingRefusal{FailureState{Count: 5, Stopped: true, LastError: "boom"}}, end)
	if !done || !errors.Is(err, ErrTooManyErrors) || r.status().State != StateStopped {
		t.Fatalf("stopped: done %v err %v", done, err)
	}
}
