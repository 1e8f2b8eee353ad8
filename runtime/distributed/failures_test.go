package distributed

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// failingCoordinator starts a coordinator on r's server for pipeline "p"
// with the failure rules given, shared before Start as the pool does.
func failingCoordinator(t *testing.T, r *real, workerID string, rules runtime.FailureRules) *RedisWorkerCoordinator {
	t.Helper()
	return failingCoordinatorWith(t, r.options(5*time.Second), workerID, rules)
}

// failingCoordinatorWith is failingCoordinator with opts.
func failingCoordinatorWith(t *testing.T, opts Options, workerID string, rules runtime.FailureRules) *RedisWorkerCoordinator {
	t.Helper()
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if c.Capabilities().FailureSharer == nil {
		t.Fatal("a one-server coordinator does not share failures")
	}
	c.ShareFailures(map[string]runtime.FailureRules{"p": rules})
	if err := c.Start(context.Background(), workerID, []string{"p"}); err != nil {
		t.Fatal(err)
	}
	return c
}

// failRun acquires slot (a Unix second) for c and gives the lease back as
// a failed run.
func failRun(t *testing.T, c *RedisWorkerCoordinator, slot int64, msg string) runtime.FailureState {
	t.Helper()
	return failRunNumber(t, c, slotRun(slot), msg)
}

// failRunNumber is failRun for a run number as the runtime makes it.
func failRunNumber(t *testing.T, c *RedisWorkerCoordinator, run int64, msg string) runtime.FailureState {
	t.Helper()
	lease := mustAcquireRun(t, c, "p", run)
	rec := history.Record{PipelineID: "p", RunNumber: lease.RunNumber, Start: time.Now(), End: time.Now(),
		Outcome: history.OutcomeFailed, Error: msg}
	if err := c.FinishRun(context.Background(), rec); err != nil {
		t.Fatalf("FinishRun: %v", err)
	}
	st, ok := c.Failures("p")
	if !ok {
		t.Fatal("Failures: nothing learned from the failed run's give-back")
	}
	return st
}

// failingRefusal asks c for slot (a Unix second) and returns the
// *FailingError it must be refused with.
func failingRefusal(t *testing.T, c *RedisWorkerCoordinator, slot int64) *runtime.FailingError {
	t.Helper()
	ok, err := c.TryAcquireLease(context.Background(), "p", slotRun(slot))
	var failing *runtime.FailingError
	if ok || !errors.As(err, &failing) {
		t.Fatalf("TryAcquireLease(p, %d) = %v, %v; want refused with a *runtime.FailingError", slot, ok, err)
	}
	return failing
}

// TestFailureStateIsSharedByTheFleet: a failed run on one replica makes
// every replica back off, the count is the fleet's, and at the maximum
// every replica is refused with the terminal error; a success clears it.
// A failed slot is given back, not completed, so every retry asks for the
// same slot, as the runner does.
func TestFailureStateIsSharedByTheFleet(t *testing.T) {
	r := newReal(t)
	rules := runtime.FailureRules{MaxConsecutiveErrors: 3, ErrorBackoff: 300 * time.Millisecond}
	a := failingCoordinator(t, r, "a", rules)
	b := failingCoordinator(t, r, "b", rules)
	slot := liveSlot()

	st := failRun(t, a, slot, "source missing")
	if st.Count != 1 || st.Stopped || time.Until(st.Until) <= 0 || time.Until(st.Until) > 300*time.Millisecond {
		t.Fatalf("after the first failure: %+v; want count 1, backing off for at most 300ms", st)
	}
	f := failingRefusal(t, b, slot)
	if !errors.Is(f, runtime.ErrBackingOff) || f.State.Count != 1 || f.State.LastError != "source missing" {
		t.Fatalf("b refused with %+v (%v); want backing off, count 1, the last error", f.State, f)
	}
	if failingRefusal(t, a, slot).State.Count != 1 {
		t.Fatal("a is not refused by its own backoff")
	}

	time.Sleep(time.Until(f.State.Until) + 20*time.Millisecond)
	st = failRun(t, b, slot, "source still missing")
	if st.Count != 2 || time.Until(st.Until) <= 300*time.Millisecond {
		t.Fatalf("after b's failure: %+v; want count 2 and a doubled backoff", st)
	}
	time.Sleep(time.Until(st.Until) + 20*time.Millisecond)
	st = failRun(t, a, slot, "gone")
	if st.Count != 3 || !st.Stopped {
		t.Fatalf("after the third failure: %+v; want count 3, stopped", st)
	}
	for _, c := range []*RedisWorkerCoordinator{a, b} {
		f := failingRefusal(t, c, slot)
		if !errors.Is(f, runtime.ErrTooManyErrors) || !f.State.Stopped || f.State.Count != 3 || f.State.LastError != "gone" {
			t.Fatalf("refused with %+v; want stopped at 3 with the last error", f.State)
		}
	}
	states, err := b.FailureStates(context.Background(), []string{"p", "other"})
	if err != nil || states[0].Count != 3 || !states[0].Stopped || states[0].LastError != "gone" || states[1].Count != 0 {
		t.Fatalf("FailureStates = %+v, %v", states, err)
	}
	// The stop is in the audit log once, by the worker whose run reached
	// the maximum.
	entries, err := b.AuditLog(context.Background(), AuditQuery{PipelineIDs: []string{"p"}})
	if err != nil || len(entries) != 1 || entries[0].Action != AuditStop || entries[0].Actor != "worker a" ||
		!strings.Contains(entries[0].Reason, "3 consecutive failed runs; last error: gone") {
		t.Fatalf("audit log after the stop = %+v, %v", entries, err)
	}

	// A worker starting anew begins a new count; a success clears it.
	c := failingCoordinator(t, r, "c", rules)
	if !strings.Contains(r.logs.String(), "begins a new count") {
		t.Error("the reset at start is not logged")
	}
	st = failRun(t, c, slot, "again")
	if st.Count != 1 {
		t.Fatalf("after a fresh start: count %d, want 1", st.Count)
	}
	time.Sleep(time.Until(st.Until) + 20*time.Millisecond)
	mustAcquire(t, c, "p", slot)
	if err := c.FinishRun(context.Background(), history.Record{PipelineID: "p", Outcome: history.OutcomeSucceeded, End: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if st, err := c.FailureState(context.Background(), "p"); err != nil || st != (runtime.FailureState{}) {
		t.Fatalf("after a success: %+v, %v; want no failure state", st, err)
	}
	// The slot completed; the next run of the pipeline is granted.
	mustAcquire(t, a, "p", runtime.RunNumberAuto)
}

// TestFailureStateIgnoresTriggeredAndPipelinesWithoutRules: a triggered
// run's failure is not counted, nor is one of a pipeline the pool shared
// no rules for.
func TestFailureStateIgnoresTriggeredAndPipelinesWithoutRules(t *testing.T) {
	r := newReal(t)
	a := failingCoordinator(t, r, "a", runtime.FailureRules{MaxConsecutiveErrors: 1})
	mustAcquire(t, a, "p", runtime.RunNumberAuto)
	if err := a.FinishRun(context.Background(), history.Record{PipelineID: "p", Outcome: history.OutcomeFailed, Error: "x", Triggered: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Failures("p"); ok {
		t.Error("a triggered run's failure was recorded")
	}
	mustAcquire(t, a, "p", liveSlot())

	b := startCoordinator(t, r.options(5*time.Second), "b", []string{"q"})
	slot := liveSlot()
	mustAcquire(t, b, "q", slot)
	if err := b.FinishRun(context.Background(), history.Record{PipelineID: "q", Outcome: history.OutcomeFailed, Error: "x"}); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, b, "q", slot) // retried at once: no backoff
}

// TestFailingRepliesParse: the acquire script's string replies.
func TestFailingRepliesParse(t *testing.T) {
	s := settings{}
	req := leaseRequest{PipelineID: "p", Mode: 100}
	res, err := parseFailingReply("g 1700000000000001 2", req, s)
	if err != nil || res.Outcome != outcomeAcquired || res.Token != 1700000000000001 || res.Failures != 2 || res.RunNumber != 100 {
		t.Errorf("grant: %+v, %v", res, err)
	}
	res, err = parseFailingReply("b 2 1500", req, s)
	if err != nil || res.Outcome != outcomeBackingOff || res.Failures != 2 || res.RetryIn != 1500*time.Millisecond {
		t.Errorf("backoff: %+v, %v", res, err)
	}
	res, err = parseFailingReply("s 3", req, s)
	if err != nil || res.Outcome != outcomeFailStopped || res.Failures != 3 {
		t.Errorf("stopped: %+v, %v", res, err)
	}
	for _, bad := range []string{"", "g 1", "b x 1", "s", "s -1", "z 1 2", "g 0 1"} {
		if _, err := parseFailingReply(bad, req, s); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestFailureStateInRedlockModeLivesOnThePrimary: with Redlock leases the
// failure is recorded on the primary before the quorum lease is released,
// the other replica backs off, and a success clears the state.
func TestFailureStateInRedlockModeLivesOnThePrimary(t *testing.T) {
	rig := newQuorumRig(t, 3)
	rules := runtime.FailureRules{MaxConsecutiveErrors: 5, ErrorBackoff: 300 * time.Millisecond}
	a := failingCoordinatorWith(t, rig.options(5*time.Second), "a", rules)
	b := failingCoordinatorWith(t, rig.options(5*time.Second), "b", rules)
	slot := liveSlot()
	st := failRun(t, a, slot, "sink down")
	if st.Count != 1 || time.Until(st.Until) <= 0 {
		t.Fatalf("after the failure: %+v", st)
	}
	f := failingRefusal(t, b, slot)
	if f.State.Count != 1 || f.State.LastError != "sink down" {
		t.Fatalf("b refused with %+v", f.State)
	}
	time.Sleep(time.Until(f.State.Until) + 20*time.Millisecond)
	mustAcquire(t, b, "p", slot)
	if err := b.FinishRun(context.Background(), history.Record{PipelineID: "p", Outcome: history.OutcomeSucceeded, End: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if st, err := a.FailureState(context.Background(), "p"); err != nil || st.Count != 0 {
		t.Fatalf("after a success: %+v, %v", st, err)
	}
	mustAcquire(t, a, "p", runtime.RunNumberAuto)
}

// TestFailureStateOnACluster: the failure state shares the pipeline's hash
// slot, so the scripts run on a Cluster; a batch asks as a single request.
func TestFailureStateOnACluster(t *testing.T) {
	r := newClusterReal(t)
	rules := runtime.FailureRules{MaxConsecutiveErrors: 2, ErrorBackoff: 300 * time.Millisecond}
	a := failingCoordinatorWith(t, r.options(5*time.Second), "a", rules)
	b := failingCoordinatorWith(t, r.options(5*time.Second), "b", rules)
	slot := liveSlot()
	if st := failRun(t, a, slot, "first"); st.Count != 1 {
		t.Fatalf("after the first failure: %+v", st)
	}
	rep := b.TryAcquireLeases(context.Background(), []runtime.LeaseRequest{{PipelineID: "p", RunNumber: slotRun(slot)}})[0]
	var f *runtime.FailingError
	if rep.Acquired || !errors.As(rep.Err, &f) || f.State.Count != 1 || f.State.LastError != "first" {
		t.Fatalf("batch reply while backing off: %+v", rep)
	}
	time.Sleep(time.Until(f.State.Until) + 20*time.Millisecond)
	if st := failRun(t, b, slot, "second"); !st.Stopped || st.Count != 2 {
		t.Fatalf("after the second failure: %+v; want stopped", st)
	}
	if f := failingRefusal(t, a, slot); !f.State.Stopped || f.State.LastError != "second" {
		t.Fatalf("a refused with %+v", f.State)
	}
}

// TestFailureStateIsLostWithAnEmptyRedisRestart: the state lives in Redis,
// so after an empty restart the backoff is gone and the count starts
// again from 0 (docs/distributed.md, "Failed runs, fleet-wide").
func TestFailureStateIsLostWithAnEmptyRedisRestart(t *testing.T) {
	r := newReal(t)
	rules := runtime.FailureRules{MaxConsecutiveErrors: 2, ErrorBackoff: time.Minute}
	a := failingCoordinator(t, r, "a", rules)
	b := failingCoordinator(t, r, "b", rules)
	if st := failRun(t, a, liveSlot(), "first"); st.Count != 1 {
		t.Fatalf("after the failure: %+v", st)
	}
	if f := failingRefusal(t, b, liveSlot()); f.State.Count != 1 {
		t.Fatalf("refused with %+v", f.State)
	}
	r.srv.Restart()
	slot := liveSlot() + 1 // after the new state epoch
	waitUntil(t, 10*time.Second, "a grant after the restart", func() bool {
		ok, err := b.TryAcquireLease(context.Background(), "p", slot)
		return ok && err == nil
	})
	rec := history.Record{PipelineID: "p", Outcome: history.OutcomeFailed, Error: "after", End: time.Now()}
	if err := b.FinishRun(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if st, ok := b.Failures("p"); !ok || st.Count != 1 || st.Stopped {
		t.Fatalf("after the restart the count is %+v, want 1 again (not 2: stopped)", st)
	}
}

// TestFailureStateCoversCountedRuns: the failure state is the pipeline's,
// whatever its run numbers: a failed counted run makes the next counted
// run, and a slot, wait for the backoff on every replica.
func TestFailureStateCoversCountedRuns(t *testing.T) {
	r := newReal(t)
	rules := runtime.FailureRules{MaxConsecutiveErrors: 3, ErrorBackoff: 300 * time.Millisecond}
	a := failingCoordinator(t, r, "a", rules)
	b := failingCoordinator(t, r, "b", rules)
	slot := liveSlot()
	if st := failRunNumber(t, a, runtime.CountedRun(1), "down"); st.Count != 1 {
		t.Fatalf("after the failed counted run: %+v", st)
	}
	ok, err := b.TryAcquireLease(context.Background(), "p", runtime.CountedRun(2))
	var f *runtime.FailingError
	if ok || !errors.As(err, &f) || !errors.Is(err, runtime.ErrBackingOff) || f.State.Count != 1 {
		t.Fatalf("counted run 2 while backing off: %v, %v", ok, err)
	}
	if f := failingRefusal(t, b, slot); f.State.Count != 1 || f.State.LastError != "down" {
		t.Fatalf("a slot while backing off: %+v", f.State)
	}
	time.Sleep(time.Until(f.State.Until) + 20*time.Millisecond)
	if st := failRunNumber(t, b, runtime.CountedRun(2), "still down"); st.Count != 2 {
		t.Fatalf("after the second failed counted run: %+v", st)
	}
}
