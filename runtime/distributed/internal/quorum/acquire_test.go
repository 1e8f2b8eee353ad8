package quorum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

func TestLateMajorityIsNotALease(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	r := newTestRig(t, 3, ttl)
	b := r.b
	if err := b.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Let one node take longer than the whole lease: the coordinator's own
	// timeouts would never allow this, so the backend is driven directly.
	b.nodeTimeout = 5 * time.Second
	r.servers[2].Kill()
	r.servers[1].Pause()
	go func() {
		time.Sleep(ttl + 200*time.Millisecond)
		r.servers[1].Resume()
	}()
	l := Lease{PipelineID: "p", Owner: "a#1", Token: 7, RunNumber: 7, Mode: runtime.RunNumberAuto}
	start := time.Now()
	outcome, _, err := b.Acquire(context.Background(), start, l)
	took := time.Since(start)
	if err == nil || !errors.Is(err, ErrNotReached) || !strings.Contains(err.Error(), "past its validity") {
		t.Fatalf("Acquire after %s = %v, %v; want ErrNotReached past the validity window", took, outcome, err)
	}
	if took < ttl {
		t.Fatalf("Acquire returned after %s, before node 1 answered", took)
	}
	if st := b.Status(); st.LateAcquisitions != 1 || st.FailedAcquisitions != 1 {
		t.Errorf("status %+v: want one late, failed acquisition", st)
	}
	// Both nodes that accepted it late had it released again.
	for _, i := range []int{0, 1} {
		v, err := b.nodes[i].client.Get(context.Background(), b.keys.Lease("p")).Result()
		if !errors.Is(err, redis.Nil) {
			t.Errorf("node %d holds %q (%v) after the late majority was given up", i, v, err)
		}
	}
	if got := r.primary.releasedReservations(); len(got) != 1 || got[0] != l {
		t.Errorf("reservations given back %+v; want that of %+v", got, l)
	}
}
