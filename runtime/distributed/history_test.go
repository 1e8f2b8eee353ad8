package distributed

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// finishRun acquires run of p on c and finishes it with outcome.
func finishRun(t *testing.T, c *RedisWorkerCoordinator, p string, run int64, outcome history.Outcome, errText string, end time.Time) {
	t.Helper()
	mustAcquire(t, c, p, run)
	rec := history.Record{PipelineID: p, Start: end.Add(-time.Second), End: end, Duration: time.Second,
		Outcome: outcome, Error: errText, Records: history.RecordCounts{In: 3, Out: 2, DeadLettered: 1}}
	if err := c.FinishRun(context.Background(), rec); err != nil {
		t.Fatalf("FinishRun: %v", err)
	}
}

func TestRunHistoryRecordsEveryRunNewestFirst(t *testing.T) {
	u := newUnit(t)
	c := u.started(u.options(), "w1")
	hook := &tripCounter{}
	c.client.AddHook(hook)
	now := u.clock.Now()
	trips, cmds := hook.measure(func() { finishRun(t, c, "p", 100, history.OutcomeSucceeded, "", now) })
	// The acquire's round trip plus two for the completion: the ZADD, which
	// carries the record (no command is added), then the LREM once the slot
	// is recorded.
	if trips != 3 || cmds != 3 {
		t.Errorf("a recorded successful slot run took %d round trips and %d commands, want 3 and 3 (acquire; ZADD; LREM)", trips, cmds)
	}
	trips, cmds = hook.measure(func() { finishRun(t, c, "p", 101, history.OutcomeFailed, "boom", now.Add(time.Second)) })
	if trips != 2 || cmds != 3 {
		t.Errorf("a recorded failed run took %d round trips and %d commands, want 2 and 3 (acquire; ZADD+LREM)", trips, cmds)
	}

	runs, err := c.RunHistory(context.Background(), "p", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("history has %d runs, want 2: %+v", len(runs), runs)
	}
	if runs[0].RunNumber != 101 || runs[0].Outcome != history.OutcomeFailed || runs[0].Error != "boom" {
		t.Errorf("newest = %+v, want run 101 failed with boom", runs[0])
	}
	if runs[1].RunNumber != 100 || runs[1].Outcome != history.OutcomeSucceeded || runs[1].WorkerID != "w1" || runs[1].FencingToken == 0 {
		t.Errorf("oldest = %+v, want run 100 succeeded by w1 with a token", runs[1])
	}
	if runs[0].FencingToken <= runs[1].FencingToken {
		t.Errorf("tokens %d then %d: not increasing", runs[1].FencingToken, runs[0].FencingToken)
	}
	if runs[1].Records != (history.RecordCounts{In: 3, Out: 2, DeadLettered: 1}) {
		t.Errorf("records = %+v", runs[1].Records)
	}
	// The slot is still recorded, and the history did not disturb it.
	if ok, err := c.TryAcquireLease(context.Background(), "p", slotRun(100)); ok || err == nil {
		t.Errorf("slot 100 after its recorded completion: %v, %v; want refused as completed", ok, err)
	}
}

func TestRunHistoryIsBoundedByCountAndAge(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.RunHistory = history.Policy{Limit: 8, MaxAge: time.Hour}
	c := u.started(opts, "w1")
	now := u.clock.Now()
	for i := range 40 {
		finishRun(t, c, "p", int64(1000+i), history.OutcomeSucceeded, "", now.Add(time.Duration(i)*time.Second))
	}
	runs, err := c.RunHistory(context.Background(), "p", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 || runs[0].RunNumber != 1039 || runs[7].RunNumber != 1032 {
		t.Fatalf("got %d runs (first %v), want the newest 8, 1039 down to 1032", len(runs), runs)
	}
	// Stored: at most Limit plus one trim interval (Limit/4), besides the
	// slot member.
	n, _ := c.client.ZCard(context.Background(), c.keys.done("p")).Result()
	if n > 1+8+2 {
		t.Errorf("the completed key holds %d members, want at most %d", n, 1+8+2)
	}
	// Two hours later, nothing is shown, and the next trims drop them.
	u.advance(2 * time.Hour)
	if runs, _ := c.RunHistory(context.Background(), "p", 0); len(runs) != 0 {
		t.Errorf("after 2 h with MaxAge 1 h, %d runs shown", len(runs))
	}
	for i := range 2 {
		finishRun(t, c, "p", int64(9000+i), history.OutcomeSucceeded, "", u.clock.Now())
	}
	n, _ = c.client.ZCard(context.Background(), c.keys.done("p")).Result()
	if n != 1+2 {
		t.Errorf("after a trim, the completed key holds %d members, want the slot and 2 runs", n)
	}
	if ok, err := c.TryAcquireLease(context.Background(), "p", slotRun(9001)); ok || err == nil {
		t.Errorf("slot 9001 is not recorded as completed: %v, %v", ok, err)
	}
}

func TestRunHistoryOffAddsNothing(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.RunHistory = history.Policy{Off: true}
	c := u.started(opts, "w1")
	hook := &tripCounter{}
	c.client.AddHook(hook)
	_, cmds := hook.measure(func() { finishRun(t, c, "p", 7, history.OutcomeFailed, "x", u.clock.Now()) })
	if cmds != 2 {
		t.Errorf("history off: a failed run took %d commands, want 2 (acquire, LREM)", cmds)
	}
	if runs, _ := c.RunHistory(context.Background(), "p", 0); len(runs) != 0 {
		t.Errorf("history off: %d runs recorded", len(runs))
	}
}

func TestRunHistoryOfContinuousRunsAndLimit(t *testing.T) {
	u := newUnit(t)
	c := u.started(u.options(), "w1")
	for i := range 3 {
		finishRun(t, c, "c", runtime.RunNumberAuto, history.OutcomeSucceeded, "", u.clock.Now().Add(time.Duration(i)*time.Millisecond))
	}
	runs, err := c.RunHistory(context.Background(), "c", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].RunNumber <= runs[1].RunNumber {
		t.Fatalf("continuous history with limit 2: %+v", runs)
	}
}

func TestRunHistorySetting(t *testing.T) {
	t.Setenv(EnvPrefix+"_RUN_HISTORY", "25,1h")
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Options().RunHistory; p.Limit != 25 || p.MaxAge != time.Hour || p.Off {
		t.Errorf("25,1h read as %+v", p)
	}
	t.Setenv(EnvPrefix+"_RUN_HISTORY", "off")
	if cfg, err = LoadConfig(); err != nil || !cfg.Options().RunHistory.Off {
		t.Errorf("off read as %+v, %v", cfg.Options().RunHistory, err)
	}
	t.Setenv(EnvPrefix+"_RUN_HISTORY", "lots")
	_, err = LoadConfig()
	if err == nil || !strings.Contains(err.Error(), EnvPrefix+"_RUN_HISTORY") || !strings.Contains(err.Error(), "100,168h") {
		t.Errorf("bad value: %v; want an error naming the variable and the format", err)
	}
}

func TestRunHistoryRecordsARunWhoseLeaseWasLost(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	lease := mustAcquire(t, a, "p", 50)
	// The lease goes: its renewal deadline passes unrenewed.
	a.mu.Lock()
	delete(a.leases, "p")
	a.mu.Unlock()
	rec := history.Record{PipelineID: "p", RunNumber: lease.RunNumber, FencingToken: lease.FencingToken, WorkerID: "a",
		Start: u.clock.Now(), End: u.clock.Now(), Outcome: history.OutcomeCancelled, Error: "run context cancelled: lease lost"}
	if err := a.FinishRun(context.Background(), rec); err == nil {
		t.Fatal("FinishRun without the lease: nil error, want ErrLeaseNotHeld")
	}
	runs, err := a.RunHistory(context.Background(), "p", 0)
	if err != nil || len(runs) != 1 || runs[0].Outcome != history.OutcomeCancelled || runs[0].FencingToken != lease.FencingToken {
		t.Fatalf("history after a lost lease: %+v, %v", runs, err)
	}
}
