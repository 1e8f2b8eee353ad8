package distributed

import (
	"errors"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// TestSentinelFailoverThatLosesTheLastWritesGrantsNoSlotTwice grants a
// slot on the primary while its replica is stopped (SIGSTOP) and its
// replication link cut, so it receives nothing, kills the primary and lets the Sentinels promote the replica,
// which never saw the grant. Another worker asking for the same slot on
// the new primary must not be granted it; a run that may have begun is
// not begun again.
func TestSentinelFailoverThatLosesTheLastWritesGrantsNoSlotTwice(t *testing.T) {
	r := newSentinelReal(t)
	a := r.started("a")
	b := r.started("b")
	old, replica := r.g.Data[0], r.g.Data[1]
	if r.g.Master() != old {
		t.Fatal("the group does not start on its first data server")
	}

	// Stopped, and cut off: what the primary wrote before the kill could
	// still be in the replica's socket buffer, so the link is closed too.
	replica.Pause()
	if err := r.data(old).ClientKillByFilter(ctx, "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	slot := thisSlot()
	granted := mustAcquire(t, a, "p", slot)
	old.Kill()
	replica.Resume()
	next := r.g.WaitNewMaster(old, 20*time.Second)
	if next != replica {
		t.Fatal("the replica was not promoted")
	}
	k := keysFor(a.s)
	if n := r.data(next).Exists(ctx, k.lease("p")).Val(); n != 0 {
		t.Fatal("the new primary has the lease: it did not miss the grant, the test proves nothing")
	}

	// b reaches the new primary once its connections notice the switch;
	// until then it gets transport errors, which are refusals too. Asking
	// for a pipeline of its own tells when it is answered there.
	other := acquireEventually(t, b, "other", 15*time.Second)
	t.Logf("b answered by the new primary (token %d on another pipeline)", other.FencingToken)
	ok, err := b.TryAcquireLease(ctx, "p", slotRun(slot))
	if ok {
		lease, _ := b.CurrentLease("p")
		t.Fatalf("slot %d granted twice: to a (token %d) before the failover, to b (token %d) after it",
			slot, granted.FencingToken, lease.FencingToken)
	}
	switch {
	case err == nil, errors.Is(err, runtime.ErrSlotCompleted):
		t.Logf("b refused slot %d after the failover: %v", slot, err)
	default:
		t.Logf("b refused slot %d after the failover with an error: %v", slot, err)
	}
	r.checkNoPassword(a, b)
}
