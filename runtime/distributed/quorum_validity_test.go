package distributed

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestRedlockStalledNodeDoesNotStretchAcquisition(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = 2 * time.Second
	c := r.started(r.options(ttl), "a")
	nodeTimeout := quorumOf(t, c).nodeTimeout
	mustAcquire(t, c, "warm", runtime.RunNumberAuto)

	// One node stalls (SIGSTOP): the two others make the majority and
	// nobody waits for the third.
	r.nodes[2].Pause()
	t.Cleanup(r.nodes[2].Resume)
	start := time.Now()
	lease := mustAcquire(t, c, "p", runtime.RunNumberAuto)
	if took := time.Since(start); took >= nodeTimeout {
		t.Errorf("acquisition with one node stalled took %s; want under the %s node timeout", took, nodeTimeout)
	}
	if valid, window := lease.ExpiresAt.Sub(lease.AcquiredAt), quorumValidity(ttl, DefaultRedlockClockDriftFactor); valid > window || lease.AcquiredAt.Before(start) {
		t.Errorf("lease %+v valid for %s; want at most the validity window %s from before the first request", lease, valid, window)
	}

	// With a second node dead the stalled one is needed: the attempt ends
	// after one node timeout (and one more for the release), far inside the
	// validity window, and fails.
	r.nodes[1].Kill()
	start = time.Now()
	mustFailSafe(t, c, "q", runtime.RunNumberAuto, ErrQuorumNotReached)
	if took := time.Since(start); took > 3*nodeTimeout {
		t.Errorf("failed acquisition took %s; want about two node timeouts (%s each)", took, nodeTimeout)
	}
	if got := r.leaseTokens("q", 0); got[0] != "" {
		t.Errorf("the failed attempt left token %s on node 0", got[0])
	}
}

func TestRedlockLateMajorityIsNotALease(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = time.Second
	c := r.started(r.options(ttl), "a")
	b := quorumOf(t, c)
	// Let one node take longer than the whole lease: the coordinator's own
	// timeouts would never allow this, so the backend is driven directly.
	b.nodeTimeout = 5 * time.Second
	r.nodes[2].Kill()
	r.nodes[1].Pause()
	go func() {
		time.Sleep(ttl + 200*time.Millisecond)
		r.nodes[1].Resume()
	}()
	start := time.Now()
	res, err := b.acquire(context.Background(), leaseRequest{PipelineID: "p", Owner: "a#1", RecordKey: c.recordKeyArg, Mode: runtime.RunNumberAuto})
	took := time.Since(start)
	if err == nil || !errors.Is(err, ErrQuorumNotReached) || !strings.Contains(err.Error(), "past its validity") {
		t.Fatalf("acquire after %s = %+v, %v; want ErrQuorumNotReached past the validity window", took, res, err)
	}
	if took < ttl {
		t.Fatalf("acquire returned after %s, before node 1 answered", took)
	}
	if rs := redlockStatus(t, c); rs.LateAcquisitions != 1 || rs.FailedAcquisitions != 1 {
		t.Errorf("status %+v: want one late, failed acquisition", rs)
	}
	// Both nodes that accepted it late had it released again.
	if got := r.leaseTokens("p", 0, 1); got[0]+got[1] != "" {
		t.Errorf("nodes hold %q after the late majority was given up", got)
	}
	if r.reservationExists("p") {
		t.Error("the primary keeps the reservation of a lease that never held")
	}
}
