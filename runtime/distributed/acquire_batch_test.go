package distributed

import (
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
	before, _ := serverCalls(t, r)

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
	perRun := float64(after-before) / n
	t.Logf("%.1f Redis commands per run (3 contenders, acquire + complete); evalsha %d, lindex %d, exists %d, time %d",
		perRun, stats["evalsha"].Calls, stats["lindex"].Calls, stats["exists"].Calls, stats["time"].Calls)
	// Three claims (SET NX), then the winner's EVALSHA, LINDEX, GET, TIME,
	// SET, RPUSH, PEXPIRE (its record was written at Start), and the
	// completion's EVALSHA, LREM, SET: 13.
	if perRun > 13.1 {
		t.Errorf("%.1f commands per run, want at most 13", perRun)
	}
	if got := stats["evalsha"].Calls; got > 2*n+10 {
		t.Errorf("%d script calls for %d runs; want the winners' acquire and completion only", got, n)
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
	// A refusal mints nothing: one TIME per grant.
	if got := stats["time"].Calls; got != n {
		t.Errorf("TIME ran %d times for %d grants; a refusal must not mint a token", got, n)
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
