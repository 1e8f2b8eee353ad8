package distributed

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// missed calls MissedDeadline and fails the test on an error.
func missed(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, slot int64) bool {
	t.Helper()
	ok, err := c.MissedDeadline(context.Background(), pipelineID, slot)
	if err != nil {
		t.Fatalf("MissedDeadline(%q, %d): %v", pipelineID, slot, err)
	}
	return ok
}

// TestMissedDeadlineOnceForTheFleet: three workers asking about the same
// slot at once: exactly one reports it; a completed slot is reported by
// none; an older slot after a newer one was reported is not reported.
func TestMissedDeadlineOnceForTheFleet(t *testing.T) {
	r := newReal(t)
	opts := r.options(5 * time.Second)
	opts.FencingKeyTTL = time.Hour // the state TTL the reported key shares
	workers := []*RedisWorkerCoordinator{r.started(opts, "a"), r.started(opts, "b"), r.started(opts, "c")}

	const slot = 1_796_263_200 // 2026-12-03T02:00:00Z
	for round, s := range []int64{slot, slot + 60, slot + 120} {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			yes  int
			errs []error
		)
		start := make(chan struct{})
		for _, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ok, err := w.MissedDeadline(context.Background(), "p", s)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if ok {
					yes++
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(errs) != 0 || yes != 1 {
			t.Fatalf("round %d: %d workers report slot %d (errors %v), want exactly one", round, yes, s, errs)
		}
	}
	// Reported already, by anyone: nobody reports it again, nor an older one.
	for _, w := range workers {
		if missed(t, w, "p", slot+120) || missed(t, w, "p", slot+60) || missed(t, w, "p", slot) {
			t.Fatal("a reported (or older) slot reported again")
		}
	}
	// A worker that checks late reports a slot nobody reported yet.
	if !missed(t, workers[2], "p", slot+240) {
		t.Fatal("a later slot nobody reported is not reported")
	}
	v, err := r.client(0).Get(context.Background(), keysFor(workers[0].s).deadline("p")).Result()
	if err != nil || v != "1796263440" {
		t.Fatalf("reported key = %q, %v; want the last reported slot", v, err)
	}
	if ttl := r.client(0).PTTL(context.Background(), keysFor(workers[0].s).deadline("p")).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("reported key TTL %v, want the state TTL (1h)", ttl)
	}
}

// TestMissedDeadlineCompletedSlot: a slot the fleet completed (or one
// before it) is no miss for anyone.
func TestMissedDeadlineCompletedSlot(t *testing.T) {
	r := newReal(t)
	opts := r.options(5 * time.Second)
	a, b := r.started(opts, "a"), r.started(opts, "b")
	s := liveSlot()
	mustAcquire(t, a, "p", s)
	if err := a.CompleteLease(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*RedisWorkerCoordinator{a, b} {
		if missed(t, c, "p", s) || missed(t, c, "p", s-60) {
			t.Fatal("a completed slot reported as missed")
		}
	}
	if !missed(t, b, "p", s+60) {
		t.Fatal("the slot after the completed one, not completed, is not reported")
	}
}

// TestMissedDeadlineFailureStateIsNoSlot: the failure state's members of
// the completed set ("fails", "fail_until", scored above 2^52) do not make
// a slot completed.
func TestMissedDeadlineFailureStateIsNoSlot(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(5*time.Second), "a")
	k := keysFor(c.s)
	const slot = 1_796_263_200
	err := r.client(0).ZAdd(context.Background(), k.done("p"),
		redis.Z{Score: failBand + 3, Member: failsMember}, redis.Z{Score: failBand + 1, Member: failUntilMember},
		redis.Z{Score: slot - 60, Member: doneMember}).Err()
	if err != nil {
		t.Fatal(err)
	}
	if !missed(t, c, "p", slot) {
		t.Fatal("a failing pipeline's slot is not reported: the failure state counted as a completed slot")
	}
}

// TestMissedDeadlineForeignData: a key holding what agora does not write
// gives an error naming it, and is left as it was.
func TestMissedDeadlineForeignData(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(5*time.Second), "a")
	k := keysFor(c.s)
	rc := r.client(0)
	for _, tc := range []struct {
		name, key string
		set       func() error
	}{
		{"not a slot", k.deadline("p1"), func() error { return rc.Set(ctx, k.deadline("p1"), "not-a-slot", 0).Err() }},
		{"too long", k.deadline("p2"), func() error { return rc.Set(ctx, k.deadline("p2"), "12345678901234567", 0).Err() }},
		{"another type", k.deadline("p3"), func() error { return rc.HSet(ctx, k.deadline("p3"), "x", "1").Err() }},
		{"completed set of another type", k.done("p4"), func() error { return rc.Set(ctx, k.done("p4"), "x", 0).Err() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.set(); err != nil {
				t.Fatal(err)
			}
			id := "p" + tc.key[len(tc.key)-2:len(tc.key)-1]
			ok, err := c.MissedDeadline(context.Background(), id, 1_796_263_200)
			if ok || !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("MissedDeadline = %v, %v; want ErrForeignData naming %s", ok, err, tc.key)
			}
			typ := rc.Type(ctx, tc.key).Val()
			if (tc.name == "another type" && typ != "hash") || (tc.name != "another type" && typ != "string") {
				t.Fatalf("the foreign key was changed: type %s", typ)
			}
		})
	}
	if v := rc.Get(ctx, k.deadline("p1")).Val(); v != "not-a-slot" {
		t.Fatalf("the foreign value was replaced: %q", v)
	}
}

// TestMissedDeadlineInRedlockModeLivesOnThePrimary: with a quorum, the
// decision is the primary's, beside the completed slot and failure state.
func TestMissedDeadlineInRedlockModeLivesOnThePrimary(t *testing.T) {
	rig := newQuorumRig(t, 3)
	opts := rig.options(5 * time.Second)
	a := startCoordinator(t, opts, "a", []string{"p"})
	b := startCoordinator(t, opts, "b", []string{"p"})
	const slot = 1_796_263_200
	if !missed(t, a, "p", slot) || missed(t, b, "p", slot) {
		t.Fatal("not reported exactly once in Redlock mode")
	}
	n, err := rig.client(rig.primary).Exists(context.Background(), keys{prefix: DefaultKeyPrefix}.deadline("p")).Result()
	if err != nil || n != 1 {
		t.Fatalf("the reported slot is not on the primary: %d, %v", n, err)
	}
}

// TestMissedDeadlineOnACluster: the reported key shares the pipeline's
// hash tag, so the script runs on a Cluster.
func TestMissedDeadlineOnACluster(t *testing.T) {
	r := newClusterReal(t)
	opts := r.options(5 * time.Second)
	ids := r.pipelinesOnEveryMaster()
	a := r.started(opts, "a", ids)
	b := r.started(opts, "b", ids)
	for _, id := range ids {
		if !missed(t, a, id, 1_796_263_200) || missed(t, b, id, 1_796_263_200) {
			t.Fatalf("%s: not reported exactly once on a Cluster", id)
		}
	}
}
