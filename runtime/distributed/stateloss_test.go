package distributed

import (
	"errors"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Rules of coordination-state loss, each against a real redis-server: what
// Redis forgot (FLUSHALL, a restart without persistence, a restore that
// misses the last writes) never lets a slot be granted twice, nor a lease
// be taken over from a holder that may be alive.
//
// A refusal is any answer but a grant: false with no error, false with
// runtime.ErrSlotCompleted, or false with an error saying the state was
// lost. Each test first checks that the server answers, so a refusal is
// the coordinator's decision and not an unreachable server.

// stateLossTTL is long: no lease expires during a test, so a second grant
// can only come from what Redis forgot.
const stateLossTTL = 30 * time.Second

// refused fails the test when c is granted pipelineID's run, and returns
// what c answered.
func refused(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, run int64, rule string) error {
	t.Helper()
	ok, err := c.TryAcquireLease(ctx, pipelineID, slotRun(run))
	if ok {
		lease, _ := c.CurrentLease(pipelineID)
		t.Fatalf("%s: run %d of %q granted again (token %d)", rule, run, pipelineID, lease.FencingToken)
	}
	switch {
	case err == nil:
		t.Logf("%s: refused (false, nil)", rule)
	case errors.Is(err, runtime.ErrSlotCompleted):
		t.Logf("%s: refused as completed", rule)
	default:
		t.Logf("%s: refused with %v", rule, err)
	}
	return err
}

// ping fails the test unless the server answers: a refusal then comes from
// the coordinator, not from a dead connection.
func (r *real) ping() {
	r.t.Helper()
	if err := r.client(0).Ping(ctx).Err(); err != nil {
		r.t.Fatalf("server does not answer: %v", err)
	}
}

// thisSlot is a slot that has begun: the second that is running now.
func thisSlot() int64 { return time.Now().Unix() }

// Rule: a slot granted before a FLUSHALL is not granted again after it,
// whether its run completed or is still running.
func TestStateLossFlushBetweenTwoRequestsOfOneSlotRefusesTheSecond(t *testing.T) {
	for _, tc := range []struct {
		name     string
		complete bool
	}{{"completed", true}, {"still running", false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReal(t)
			a := r.started(r.options(stateLossTTL), "a")
			b := r.started(r.options(stateLossTTL), "b")
			slot := thisSlot()
			mustAcquire(t, a, "p", slot)
			if tc.complete {
				if err := a.CompleteLease(ctx, "p"); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.client(0).FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			r.ping()
			refused(t, b, "p", slot, "flush between two requests of one slot")
			if !tc.complete {
				// Nor by the worker that holds it, asking again as a
				// replica with a lost reply would.
				if ok, _ := a.TryAcquireLease(ctx, "p", slotRun(slot)); ok {
					t.Fatal("the holder was granted its own running slot a second time")
				}
			}
		})
	}
}

// Rule: the same holds across a restart of the server without persistence
// (a new run_id, empty data) on the same port.
func TestStateLossEmptyRestartBetweenTwoRequestsOfOneSlotRefusesTheSecond(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(stateLossTTL), "a")
	b := r.started(r.options(stateLossTTL), "b")
	slot := thisSlot()
	mustAcquire(t, a, "p", slot)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	r.srv.Restart()
	r.ping()
	// The first request after the restart may meet a dead pooled
	// connection; ask until one is answered by the new server.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := refused(t, b, "p", slot, "empty restart between two requests of one slot")
		if err == nil || errors.Is(err, runtime.ErrSlotCompleted) || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Rule: a grant always requires the requester's own record. A worker whose
// record is gone (deleted, evicted, or lost with the data) right after it
// wrote it is not granted a lease while the record is missing: either it
// is refused, or the grant rewrote the record. Either way a contender finds
// the holder's record and cannot take the lease over.
func TestStateLossGrantRequiresTheRequestersOwnRecord(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(stateLossTTL), "a")
	b := r.started(r.options(stateLossTTL), "b")
	recordA := keysFor(a.s).worker("a")
	rc := r.client(0)
	if rc.Exists(ctx, recordA).Val() != 1 {
		t.Fatal("a's record was not written at Start")
	}
	if err := rc.Del(ctx, recordA).Err(); err != nil {
		t.Fatal(err)
	}
	// A future slot: only the record rule decides, not a slot rule.
	slot := thisSlot() + 10
	ok, err := a.TryAcquireLease(ctx, "p", slotRun(slot))
	if ok && rc.Exists(ctx, recordA).Val() != 1 {
		t.Fatalf("a was granted slot %d while its record %s is missing", slot, recordA)
	}
	if !ok {
		t.Logf("a refused while its record is missing: %v", err)
		return
	}
	refused(t, b, "p", slot+1, "no takeover of a holder whose grant rewrote its record")
}

// Rule: a lease granted before a loss is never taken over after it, even
// when the lease itself survived and its holder's record did not (a restore
// from an AOF or RDB file that misses the last writes, a replica that got
// the lease but not the record refresh): the holder may be alive.
func TestStateLossNoTakeoverOfALeaseGrantedBeforeTheLoss(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(stateLossTTL), "a")
	b := r.started(r.options(stateLossTTL), "b")
	slot := thisSlot()
	held := mustAcquire(t, a, "p", slot)
	rc := r.client(0)
	leaseKey := keysFor(a.s).lease("p")
	dump, err := rc.Dump(ctx, leaseKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	pttl := rc.PTTL(ctx, leaseKey).Val()
	if err := rc.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Restore(ctx, leaseKey, pttl, dump).Err(); err != nil {
		t.Fatal(err)
	}
	// A later slot, scheduled after the loss: only the takeover rule
	// stands between b and a's lease.
	refused(t, b, "p", slot+5, "no takeover of a lease granted before the loss")
	if cur, ok := a.CurrentLease("p"); !ok || cur.FencingToken != held.FencingToken {
		t.Fatalf("a's view of its lease changed: %+v %v", cur, ok)
	}
}
