package runtime_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

// failCoord is a fakeCoord that shares failures as the Redis coordinator
// does: a failed run's give-back answers the fleet's state (after), and
// refusals carry the state set in refuse.
type failCoord struct {
	*fakeCoord
	fmu    sync.Mutex
	rules  map[string]runtime.FailureRules
	after  runtime.FailureState // what Failures answers
	refuse *runtime.FailureState
}

func (c *failCoord) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.FailureSharer = c
	return caps
}

func (c *failCoord) ShareFailures(rules map[string]runtime.FailureRules) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.rules = rules
}

func (c *failCoord) Failures(string) (runtime.FailureState, bool) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return c.after, c.after.Count > 0
}

func (c *failCoord) setRefusal(st *runtime.FailureState) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.refuse = st
}

func newFailCoord() *failCoord {
	c := &failCoord{fakeCoord: newFakeCoord()}
	c.decide = func(id string, _ int64) (bool, error) {
		c.fmu.Lock()
		defer c.fmu.Unlock()
		if c.refuse != nil {
			return false, &runtime.FailingError{PipelineID: id, State: *c.refuse}
		}
		return true, nil
	}
	return c
}

// TestFleetBackoffIsWaitedOutAndShown: refused because the pipeline backs
// off elsewhere in the fleet, a worker runs nothing, shows the fleet's
// count, backoff and last error, and asks again when the backoff ends.
func TestFleetBackoffIsWaitedOutAndShown(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFailCoord()
	until := t0.Add(40 * time.Second)
	coord.setRefusal(&runtime.FailureState{Count: 2, Until: until, LastError: "source: missing.jsonl"})
	var runs recorder
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord), runtime.WithHealthAddr("127.0.0.1:0")}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(10 * time.Second), MaxConsecutiveErrors: 5,
		Factory: failingFactory(clock, &runs, nil)})
	d.settle(t)
	if coord.rules["p"] != (runtime.FailureRules{MaxConsecutiveErrors: 5}) {
		t.Errorf("rules shared: %+v", coord.rules)
	}
	st := d.status(t, "p")
	if st.State != runtime.StateBackoff || st.ConsecutiveErrors != 2 || st.LastError != "source: missing.jsonl" ||
		st.NextRun == nil || !st.NextRun.Equal(until) || st.BackoffUntil == nil || !st.BackoffUntil.Equal(until) {
		t.Fatalf("status while the fleet backs off: %+v", st)
	}
	if st.Failures != 0 || st.Runs != 0 {
		t.Errorf("another replica's failure counted as this one's run: %+v", st)
	}
	fams := scrape(t, d.pool.HealthAddr())
	untilS := float64(until.UnixNano()) / 1e9
	for name, want := range map[string]float64{"agora_consecutive_errors": 2, "agora_next_run_timestamp_seconds": untilS,
		"agora_backoff_until_timestamp_seconds": untilS} {
		if got := value(t, fams, name, "pipeline", "p"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	advanceTo(t, clock, d, until.Add(-time.Second))
	if runs.count() != 0 {
		t.Fatal("ran before the fleet's backoff ended")
	}
	coord.setRefusal(nil)
	advanceTo(t, clock, d, until)
	if runs.count() != 1 {
		t.Fatalf("%d runs once the backoff ended, want 1", runs.count())
	}
	st = d.status(t, "p")
	if st.ConsecutiveErrors != 0 || st.BackoffUntil != nil || st.State != runtime.StateIdle {
		t.Errorf("after the success: %+v", st)
	}
	if st.LastRun == nil || st.LastRun.Outcome != history.OutcomeSucceeded || st.LastRun.LeaseToken != coord.lastToken("p") ||
		st.LastRun.RunNumber == 0 || !st.LastRun.End.Equal(until) {
		t.Errorf("last_run = %+v, want this worker's run with its number and token", st.LastRun)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestFleetStopStopsThePoolWithTheTerminalError: refused because the
// fleet's count reached the maximum, the pipeline stops with the error a
// pipeline stops with after its own failed runs.
func TestFleetStopStopsThePoolWithTheTerminalError(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFailCoord()
	coord.setRefusal(&runtime.FailureState{Count: 3, Stopped: true, LastError: "source: missing.jsonl"})
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "broken", Schedule: runtime.Every(time.Second), MaxConsecutiveErrors: 3,
		Factory: failingFactory(clock, &recorder{}, errors.New("source: missing.jsonl"))})
	err := d.result(t)
	if !errors.Is(err, runtime.ErrTooManyErrors) || !strings.Contains(err.Error(), `pipeline "broken" stopped after 3 consecutive failed runs: source: missing.jsonl`) {
		t.Fatalf("Run = %v; want the terminal error with the fleet's count and last error", err)
	}
	if st := d.status(t, "broken"); st.State != runtime.StateStopped || st.NextRun != nil || st.ConsecutiveErrors != 3 {
		t.Errorf("status: %+v", st)
	}
}

// TestFailedRunTakesTheFleetsCountAndBackoff: after a failed run the
// worker takes the count and backoff its coordinator recorded for the
// fleet, and stops when the fleet says so.
func TestFailedRunTakesTheFleetsCountAndBackoff(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFailCoord()
	until := t0.Add(25 * time.Second)
	coord.after = runtime.FailureState{Count: 4, Until: until, LastError: "source: missing.jsonl"}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Second), ErrorBackoff: time.Second,
		MaxConsecutiveErrors: 10, Factory: failingFactory(clock, &recorder{}, errors.New("source: missing.jsonl"))})
	d.settle(t)
	st := d.status(t, "p")
	if st.ConsecutiveErrors != 4 || st.NextRun == nil || !st.NextRun.Equal(until) || st.State != runtime.StateBackoff {
		t.Fatalf("after a failed run: %+v; want the fleet's count 4 and its backoff", st)
	}
	if st.LastRun == nil || st.LastRun.Outcome != history.OutcomeFailed || st.LastRun.LeaseToken == 0 {
		t.Errorf("last_run = %+v", st.LastRun)
	}
	coord.fmu.Lock()
	coord.after = runtime.FailureState{Count: 10, Stopped: true, LastError: "source: missing.jsonl"}
	coord.fmu.Unlock()
	advanceTo(t, clock, d, until)
	if err := d.result(t); !errors.Is(err, runtime.ErrTooManyErrors) || !strings.Contains(err.Error(), "after 10 consecutive failed runs") {
		t.Fatalf("Run = %v; want stopped at the fleet's count", err)
	}
}
