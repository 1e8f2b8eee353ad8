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

// askLikeThePool sends reqs as the pool's dispatcher does: the requests c
// does not defer at once, in one call, and the deferred ones in a second
// call once every worker's first calls are back (later, in real time, by
// deferredAskDelay). It returns the replies in reqs' order.
func askLikeThePool(c *RedisWorkerCoordinator, reqs []runtime.LeaseRequest) (now, later func() []runtime.LeaseReply) {
	var first, second []int
	for i, r := range reqs {
		if c.DeferLease(r) > 0 {
			second = append(second, i)
		} else {
			first = append(first, i)
		}
	}
	out := make([]runtime.LeaseReply, len(reqs))
	send := func(idx []int) func() []runtime.LeaseReply {
		return func() []runtime.LeaseReply {
			part := make([]runtime.LeaseRequest, len(idx))
			for j, i := range idx {
				part[j] = reqs[i]
			}
			for j, rep := range c.TryAcquireLeases(ctx, part) {
				out[idx[j]] = rep
			}
			return out
		}
	}
	return send(first), send(second)
}

// TestBatchedBurstAcrossReplicas has three coordinators ask for the same
// slot of 200 pipelines, as three pools would: each pipeline's preferred
// worker at once, the others after the deferral, then the winners
// complete. One grant per pipeline, each to its preferred worker; the
// deferred requests are answered by one MGET, with no script; and a
// bounded number of Redis commands per run (INFO commandstats).
func TestBatchedBurstAcrossReplicas(t *testing.T) {
	r := newReal(t)
	const n = 200
	reqs := make([]runtime.LeaseRequest, n)
	ids := make([]string, n)
	for i := range reqs {
		ids[i] = fmt.Sprintf("p%d", i)
		reqs[i] = runtime.LeaseRequest{PipelineID: ids[i], RunNumber: slotRun(100)}
	}
	var cs []*RedisWorkerCoordinator
	var hooks []*tripCounter
	for _, id := range []string{"a", "b", "c"} {
		c := startCoordinator(t, r.options(time.Minute), id, ids)
		h := &tripCounter{}
		c.client.AddHook(h)
		cs, hooks = append(cs, c), append(hooks, h)
	}
	preferred := make([]int, n) // index in cs of each pipeline's preferred worker
	for _, c := range cs {
		c.refreshPreference(ctx) // every worker sees all three
	}
	for p := range n {
		deferring := 0
		for i, c := range cs {
			if c.DeferLease(reqs[p]) > 0 {
				deferring++
			} else {
				preferred[p] = i
			}
		}
		if deferring != len(cs)-1 {
			t.Fatalf("%s: %d of %d workers defer; want all but its preferred one", ids[p], deferring, len(cs))
		}
	}
	before, statsBefore := serverCalls(t, r)
	tripsBefore := make([]int64, len(hooks))
	for i, h := range hooks {
		tripsBefore[i] = h.trips.Load()
	}

	replies := make([][]runtime.LeaseReply, len(cs))
	var nows, laters []func() []runtime.LeaseReply
	for _, c := range cs {
		now, later := askLikeThePool(c, reqs)
		nows, laters = append(nows, now), append(laters, later)
	}
	var wg sync.WaitGroup
	for i := range cs {
		wg.Go(func() { replies[i] = nows[i]() })
	}
	wg.Wait()
	for i := range cs {
		wg.Go(func() { replies[i] = laters[i]() })
	}
	wg.Wait()
	// One round trip for the script call deciding the batch at once, and
	// one for the MGET of the deferred ones.
	for i, h := range hooks {
		if trips := h.trips.Load() - tripsBefore[i]; trips != 2 {
			t.Errorf("coordinator %d: %d round trips for its batch of %d, want the acquire call's and the MGET's", i, trips, n)
		}
	}
	var tokens []int64
	var retried *RedisWorkerCoordinator
	for p := range n {
		winners := 0
		for i, c := range cs {
			rep := replies[i][p]
			if rep.Err != nil {
				t.Fatalf("%s: %v", ids[p], rep.Err)
			}
			if !rep.Acquired {
				continue
			}
			winners++
			if i != preferred[p] {
				t.Errorf("%s granted to worker %d, not to its preferred worker %d", ids[p], i, preferred[p])
			}
			lease, _ := c.CurrentLease(ids[p])
			tokens = append(tokens, lease.FencingToken)
			if p == 0 {
				// The run failed: released, to be retried.
				if err := c.ReleaseLease(ctx, ids[p]); err != nil {
					t.Fatal(err)
				}
				retried = c
				continue
			}
			if err := c.CompleteLease(ctx, ids[p]); err != nil {
				t.Fatal(err)
			}
		}
		if winners != 1 {
			t.Fatalf("%s: %d winners, want exactly 1", ids[p], winners)
		}
	}
	after, stats := serverCalls(t, r)
	for name, st := range statsBefore {
		st0 := stats[name]
		st0.Calls -= st.Calls
		stats[name] = st0
	}
	perRun := float64(after-before) / n
	t.Logf("%.2f Redis commands per run (3 workers, acquire + complete); evalsha %d, lindex %d, mget %d, time %d",
		perRun, stats["evalsha"].Calls, stats["lindex"].Calls, stats["mget"].Calls, stats["time"].Calls)
	// The preferred worker's LINDEX, ZSCORE, SET … GET of the token, RPUSH
	// and PEXPIRE inside one script call per batch (its record was written
	// at Start), and the completion's ZADD and LREM: 7, plus a script
	// call, a TIME and the other workers' MGETs per batch.
	if perRun > 7.1 {
		t.Errorf("%.2f commands per run, want at most 7", perRun)
	}
	if got := stats["evalsha"].Calls; got != int64(len(cs)) {
		t.Errorf("%d script calls; want one per worker, for the requests it asked at once", got)
	}
	if got := stats["lindex"].Calls; got != n {
		t.Errorf("LINDEX ran %d times for %d pipelines; a deferred request found granted must run no script", got, n)
	}
	if got := stats["mget"].Calls; got != int64(len(cs)) {
		t.Errorf("%d MGETs; want one per worker, for its deferred requests", got)
	}
	// The failed slot can be retried: the lease is free and the slot not
	// done.
	if rep := retried.TryAcquireLeases(ctx, reqs[:1])[0]; rep.Err != nil || !rep.Acquired {
		t.Fatalf("retry of slot 100 of p0: %+v", rep)
	}
	if err := retried.CompleteLease(ctx, "p0"); err != nil {
		t.Fatal(err)
	}
	// Again a slot later, all asked by one worker at once: every token
	// above the earlier ones.
	for i := range reqs {
		reqs[i].RunNumber = 101
	}
	rep := cs[1].TryAcquireLeases(ctx, reqs)
	for p, r := range rep {
		if !r.Acquired || r.Err != nil {
			t.Fatalf("%s slot 101: %+v", ids[p], r)
		}
		lease, _ := cs[1].CurrentLease(ids[p])
		if lease.FencingToken <= tokens[p] {
			t.Fatalf("%s: token %d not above %d", ids[p], lease.FencingToken, tokens[p])
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

// TestDeferredRequestRunsWhenThePreferredWorkerDoesNotAsk: the preferred
// worker of every pipeline is registered but never asks (dead, paused,
// slow); the deferred requests of the others find no grant and take the
// slots, one worker each.
func TestDeferredRequestRunsWhenThePreferredWorkerDoesNotAsk(t *testing.T) {
	r := newReal(t)
	const n = 50
	ids := make([]string, n)
	reqs := make([]runtime.LeaseRequest, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i)
		reqs[i] = runtime.LeaseRequest{PipelineID: ids[i], RunNumber: slotRun(100)}
	}
	var cs []*RedisWorkerCoordinator
	for _, id := range []string{"a", "b", "c"} {
		cs = append(cs, startCoordinator(t, r.options(time.Minute), id, ids))
	}
	for _, c := range cs {
		c.refreshPreference(ctx)
	}
	granted := map[string]int{}
	for _, c := range cs {
		var deferred []runtime.LeaseRequest
		for _, req := range reqs {
			if c.DeferLease(req) > 0 {
				deferred = append(deferred, req)
			}
		}
		for j, rep := range c.TryAcquireLeases(ctx, deferred) {
			if rep.Err != nil {
				t.Fatal(rep.Err)
			}
			if rep.Acquired {
				granted[deferred[j].PipelineID]++
			}
		}
	}
	for _, id := range ids {
		if granted[id] != 1 {
			t.Errorf("%s granted %d times to the deferring workers, want once", id, granted[id])
		}
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
		{PipelineID: "free-slot", RunNumber: slotRun(100)},
		{PipelineID: "held", RunNumber: runtime.RunNumberAuto},
		{PipelineID: "done", RunNumber: slotRun(100)},
		{PipelineID: "done-before", RunNumber: slotRun(160)},
		{PipelineID: "auto", RunNumber: runtime.RunNumberAuto},
		{PipelineID: "once-done", RunNumber: runtime.RunNumberOnce},
		{PipelineID: "once", RunNumber: runtime.RunNumberOnce},
	}
	want := []bool{true, false, false, true, true, false, true}
	replies := a.TryAcquireLeases(ctx, reqs)
	if trips := hook.trips.Load(); trips != 1 {
		t.Errorf("%d round trips, want 1: one script call", trips)
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
		if reqs[i].RunNumber > 0 && lease.RunNumber != runtime.RunValue(reqs[i].RunNumber) {
			t.Errorf("%s: run number %d, want the slot %d", reqs[i].PipelineID, lease.RunNumber, runtime.RunValue(reqs[i].RunNumber))
		}
		if reqs[i].RunNumber <= 0 && lease.RunNumber != lease.FencingToken {
			t.Errorf("%s: run number %d, want its token %d", reqs[i].PipelineID, lease.RunNumber, lease.FencingToken)
		}
	}
	if errors.Is(replies[2].Err, runtime.ErrSlotCompleted) != true {
		t.Errorf("completed slot: %v, want ErrSlotCompleted", replies[2].Err)
	}
}
