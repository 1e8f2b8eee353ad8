package distributed

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// serverCalls returns every command the server ran (scripts' own calls
// included), INFO aside, and the calls per command.
func serverCalls(t *testing.T, r *real) (int64, map[string]redistest.CommandStat) {
	t.Helper()
	info, err := r.client(0).Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	stats := redistest.ParseCommandStats(info)
	var total int64
	for name, st := range stats {
		if name != "info" {
			total += st.Calls
		}
	}
	return total, stats
}

// TestBatchedBurstAcrossReplicas has three coordinators ask for the same
// slot of 200 pipelines at once, each in one TryAcquireLeases call, then
// the winners complete: one grant per pipeline, one round trip per batch,
// and a bounded number of Redis commands per run (INFO commandstats).
func TestBatchedBurstAcrossReplicas(t *testing.T) {
	r := newReal(t)
	const n = 200
	reqs := make([]runtime.LeaseRequest, n)
	for i := range reqs {
		reqs[i] = runtime.LeaseRequest{PipelineID: fmt.Sprintf("p%d", i), RunNumber: 100}
	}
	var cs []*RedisWorkerCoordinator
	var hooks []*tripCounter
	for _, id := range []string{"a", "b", "c"} {
		c := r.started(r.options(time.Minute), id)
		h := &tripCounter{}
		c.client.AddHook(h)
		cs, hooks = append(cs, c), append(hooks, h)
	}
	before, statsBefore := serverCalls(t, r)

	replies := make([][]runtime.LeaseReply, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = c.TryAcquireLeases(ctx, reqs)
		}()
	}
	wg.Wait()
	// One round trip for the batch's slot claims, and one for the acquire
	// scripts of the claims it won.
	for i, h := range hooks {
		if trips := h.trips.Load(); trips < 1 || trips > 2 {
			t.Errorf("coordinator %d: %d round trips for its batch of %d, want the claims' and the acquires'", i, trips, n)
		}
	}
	var retried *RedisWorkerCoordinator
	var tokens []int64
	for p := range n {
		winners := 0
		for i, c := range cs {
			rep := replies[i][p]
			if rep.Err != nil {
				t.Fatalf("%s: %v", reqs[p].PipelineID, rep.Err)
			}
			if rep.Acquired {
				winners++
				lease, _ := c.CurrentLease(reqs[p].PipelineID)
				tokens = append(tokens, lease.FencingToken)
				if p == 0 {
					// The run failed: released, to be retried.
					if err := c.ReleaseLease(ctx, reqs[p].PipelineID); err != nil {
						t.Fatal(err)
					}
					retried = c
					continue
				}
				if err := c.CompleteLease(ctx, reqs[p].PipelineID); err != nil {
					t.Fatal(err)
				}
			}
		}
		if winners != 1 {
			t.Fatalf("%s: %d winners, want exactly 1", reqs[p].PipelineID, winners)
		}
	}
	after, stats := serverCalls(t, r)
	for name, st := range statsBefore {
		st0 := stats[name]
		st0.Calls -= st.Calls
		stats[name] = st0
	}
	perRun := float64(after-before) / n
	t.Logf("%.1f Redis commands per run (3 contenders, acquire + complete); evalsha %d, lindex %d, exists %d, time %d",
		perRun, stats["evalsha"].Calls, stats["lindex"].Calls, stats["exists"].Calls, stats["time"].Calls)
	// Three claims (SET NX), then the winner's LINDEX, ZSCORE, SET,
	// RPUSH, PEXPIRE inside one script call per batch (its record was
	// written at Start), and the completion's ZADD and LREM: 10, plus a
	// script call and a TIME per batch.
	if perRun > 10.1 {
		t.Errorf("%.1f commands per run, want at most 10", perRun)
	}
	// A batch of 200 is decided in calls of at most maxAcquireBatch.
	if got := stats["evalsha"].Calls; got > int64(len(cs)*((n+maxAcquireBatch-1)/maxAcquireBatch)) {
		t.Errorf("%d script calls for %d runs; want one per coordinator's batch of at most %d", got, n, maxAcquireBatch)
	}
	// The failed slot is retried by its claimant, and only by it.
	for _, c := range cs {
		rep := c.TryAcquireLeases(ctx, reqs[:1])[0]
		if rep.Err != nil || rep.Acquired != (c == retried) {
			t.Fatalf("retry of slot 100 of p0 by %s: %+v; want only the claimant to get it", c.workerID, rep)
		}
	}
	if err := retried.CompleteLease(ctx, "p0"); err != nil {
		t.Fatal(err)
	}
	// A refusal mints nothing: one token write per grant (the other SETs
	// are the three claims per pipeline), and a clock reading per script
	// call at most.
	if got := stats["set"].Calls; got != 4*n {
		t.Errorf("SET ran %d times for %d grants and %d claims; a refusal must not mint a token", got, n, 3*n)
	}
	if got := stats["time"].Calls; got > stats["evalsha"].Calls {
		t.Errorf("TIME ran %d times in %d script calls; want one per call at most", got, stats["evalsha"].Calls)
	}
	// Again a slot later: every token above the earlier ones.
	for i := range reqs {
		reqs[i].RunNumber = 101
	}
	rep := cs[1].TryAcquireLeases(ctx, reqs)
	for p, r := range rep {
		if !r.Acquired || r.Err != nil {
			t.Fatalf("%s slot 101: %+v", reqs[p].PipelineID, r)
		}
		lease, _ := cs[1].CurrentLease(reqs[p].PipelineID)
		if lease.FencingToken <= tokens[p] {
			t.Fatalf("%s: token %d not above %d", reqs[p].PipelineID, lease.FencingToken, tokens[p])
		}
	}
	// Refused locally (held here already): no request at all.
	trips := hooks[1].trips.Load()
	for _, r := range cs[1].TryAcquireLeases(ctx, reqs[:10]) {
		if r.Acquired || r.Err != nil {
			t.Fatalf("held lease acquired again: %+v", r)
		}
	}
	if hooks[1].trips.Load() != trips {
		t.Error("a batch of leases held here already went to Redis")
	}
}

// TestOneScriptCallDecidesEachRequestAsAlone sends one batch mixing every
// kind of request, which a single acquire script call decides: each gets
// the answer it would get alone, and the grants' tokens are distinct and
// above every earlier one.
func TestOneScriptCallDecidesEachRequestAsAlone(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(time.Minute), "a")
	b := r.started(r.options(time.Minute), "b")
	// held: b holds it. done, done-before: slot 100 completed. once-done:
	// its Once run completed.
	mustAcquire(t, b, "held", runtime.RunNumberAuto)
	for _, p := range []string{"done", "done-before"} {
		mustAcquire(t, b, p, 100)
		if err := b.CompleteLease(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	mustAcquire(t, b, "once-done", runtime.RunNumberOnce)
	if err := b.CompleteLease(ctx, "once-done"); err != nil {
		t.Fatal(err)
	}
	last, _ := b.CurrentLease("held")

	hook := &tripCounter{}
	a.client.AddHook(hook)
	reqs := []runtime.LeaseRequest{
		{PipelineID: "free-slot", RunNumber: 100},
		{PipelineID: "held", RunNumber: runtime.RunNumberAuto},
		{PipelineID: "done", RunNumber: 100},
		{PipelineID: "done-before", RunNumber: 160},
		{PipelineID: "auto", RunNumber: runtime.RunNumberAuto},
		{PipelineID: "once-done", RunNumber: runtime.RunNumberOnce},
		{PipelineID: "once", RunNumber: runtime.RunNumberOnce},
	}
	want := []bool{true, false, false, true, true, false, true}
	replies := a.TryAcquireLeases(ctx, reqs)
	if trips := hook.trips.Load(); trips != 2 {
		t.Errorf("%d round trips, want 2 (the slot claims, then one script call)", trips)
	}
	seen := map[int64]bool{}
	for i, rep := range replies {
		if rep.Acquired != want[i] {
			t.Errorf("%s run %d: acquired %v (%v), want %v", reqs[i].PipelineID, reqs[i].RunNumber, rep.Acquired, rep.Err, want[i])
			continue
		}
		if !rep.Acquired {
			continue
		}
		lease, ok := a.CurrentLease(reqs[i].PipelineID)
		if !ok || lease.FencingToken <= last.FencingToken || seen[lease.FencingToken] {
			t.Errorf("%s: lease %+v, want a new token above %d", reqs[i].PipelineID, lease, last.FencingToken)
		}
		seen[lease.FencingToken] = true
		if reqs[i].RunNumber > 0 && lease.RunNumber != reqs[i].RunNumber {
			t.Errorf("%s: run number %d, want the slot %d", reqs[i].PipelineID, lease.RunNumber, reqs[i].RunNumber)
		}
		if reqs[i].RunNumber <= 0 && lease.RunNumber != lease.FencingToken {
			t.Errorf("%s: run number %d, want its token %d", reqs[i].PipelineID, lease.RunNumber, lease.FencingToken)
		}
	}
	if errors.Is(replies[2].Err, runtime.ErrSlotCompleted) != true {
		t.Errorf("completed slot: %v, want ErrSlotCompleted", replies[2].Err)
	}
}
