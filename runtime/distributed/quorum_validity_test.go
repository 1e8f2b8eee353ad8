package distributed

import (
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/quorum"
)

func TestRedlockStalledNodeDoesNotStretchAcquisition(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = 2 * time.Second
	c := r.started(r.options(ttl), "a")
	nodeTimeout := quorumOf(t, c).redlock.NodeTimeout()
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
	if valid, window := lease.ExpiresAt.Sub(lease.AcquiredAt), quorum.Validity(ttl, DefaultRedlockClockDriftFactor); valid > window || lease.AcquiredAt.Before(start) {
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
