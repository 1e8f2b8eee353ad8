package distributed

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// On a real 3-master Cluster: the requests of a batch whose keys share a
// hash slot go to one acquire call, and lease-ahead holds its rules there
// too (the per-pipeline epoch, the slot claims).
func TestClusterBatchesBySlotAndLeasesAhead(t *testing.T) {
	r := newClusterReal(t)
	ks := keys{prefix: DefaultKeyPrefix}
	// Two pipelines of one hash slot, and one of another.
	bySlot := map[uint16]string{}
	var pair []string
	for i := 0; pair == nil && i < 20000; i++ {
		id := fmt.Sprintf("p%d", i)
		s := leasebackend.HashSlot(ks.lease(id))
		if other, ok := bySlot[s]; ok {
			pair = []string{other, id}
		}
		bySlot[s] = id
	}
	if pair == nil {
		t.Fatal("no two ids share a hash slot")
	}
	lone := "lone"
	ids := []string{pair[0], lone, pair[1]}
	early := "early"
	a := r.started(r.options(10*time.Second), "a", append(ids, early))
	b := r.started(r.options(10*time.Second), "b", append(ids, early))

	scripts := func() int64 {
		var n int64
		for i := range r.cl.Masters {
			info := r.cl.Client(i).Info(ctx, "commandstats").Val()
			st := redistest.ParseCommandStats(info)
			n += st["evalsha"].Calls + st["eval"].Calls
		}
		return n
	}
	slot := liveSlot()
	reqs := make([]runtime.LeaseRequest, len(ids))
	for i, id := range ids {
		reqs[i] = runtime.LeaseRequest{PipelineID: id, RunNumber: slotRun(slot)}
	}
	before := scripts()
	for i, rep := range a.TryAcquireLeases(ctx, reqs) {
		if !rep.Acquired || rep.Err != nil {
			t.Fatalf("%s: %+v; want granted", ids[i], rep)
		}
	}
	if n := scripts() - before; n != 2 {
		t.Errorf("%d acquire calls for 3 requests over 2 hash slots, want 2", n)
	}
	for _, id := range ids {
		if l, held := a.CurrentLease(id); !held || l.RunNumber != slot {
			t.Fatalf("%s: %+v, %v; want slot %d held", id, l, held, slot)
		}
		if err := a.CompleteLease(ctx, id); err != nil {
			t.Fatal(err)
		}
	}

	// Ahead: too early decides nothing; within the lead it is granted, and
	// the other worker is refused (by the claim) for that slot.
	far := time.Now().Unix() + 3
	if rep := askAhead(a, early, far); rep.Acquired || !errors.Is(rep.Err, runtime.ErrAskAtSlot) {
		t.Fatalf("ahead by seconds: %+v; want ErrAskAtSlot", rep)
	}
	next := aheadSlot(t, r.cl.Client(r.cl.MasterOf(ks.lease(early))))
	if rep := askAhead(a, early, next); !rep.Acquired || rep.Err != nil {
		t.Fatalf("ahead within the lead: %+v; want granted", rep)
	}
	if rep := askAhead(b, early, next); rep.Acquired || rep.Err != nil {
		t.Fatalf("b ahead of a slot granted ahead: %+v; want held", rep)
	}
	for time.Now().Unix() < next {
		time.Sleep(10 * time.Millisecond)
	}
	if ok, err := b.TryAcquireLease(ctx, early, slotRun(next)); ok || err != nil {
		t.Fatalf("b at the boundary: %v, %v; want held", ok, err)
	}
}
