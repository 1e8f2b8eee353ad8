package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/quorum"
)

func TestRedlockAcquireRenewReleaseValidate(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = 1500 * time.Millisecond // renewal every 0.5 s, deadline 1 s
	a := r.started(r.options(ttl), "a")
	b := r.started(r.options(ttl), "b")
	lost := recordLost(a)

	lease := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	if lease.FencingToken <= 0 || lease.RunNumber != lease.FencingToken || lease.WorkerID != "a" {
		t.Fatalf("lease %+v: want a positive token, run number = token, worker a", lease)
	}
	if valid, window := lease.ExpiresAt.Sub(lease.AcquiredAt), quorum.Validity(ttl, DefaultRedlockClockDriftFactor); valid > window {
		t.Errorf("lease valid for %s, longer than the validity window %s", valid, window)
	}
	want := strconv.FormatInt(lease.FencingToken, 10)
	for i := range r.nodes {
		m := r.nodeLease(i, "p")
		if m["token"] != want || m["worker"] != "a" || m["run"] != want || m["mode"] != "0" || !strings.HasPrefix(m["owner"], "a#") {
			t.Errorf("node %d holds %v; want token and run %s, worker a", i, m, want)
		}
	}
	// The primary's reservation covers the acquisition, not the lease.
	if pttl := r.client(r.primary).PTTL(ctx, keys{prefix: DefaultKeyPrefix}.lease("p")).Val(); pttl > quorumOf(t, a).reservation {
		t.Errorf("reservation PTTL %s; want at most %s", pttl, quorumOf(t, a).reservation)
	}

	mustNotAcquire(t, b, "p", runtime.RunNumberAuto)
	for _, c := range []*RedisWorkerCoordinator{a, b} {
		for tok, wantValid := range map[int64]bool{lease.FencingToken: true, lease.FencingToken + 1: false, lease.FencingToken - 1: false} {
			if ok, err := c.ValidateLease(ctx, "p", tok); err != nil || ok != wantValid {
				t.Errorf("ValidateLease(%d) = %v, %v; want %v", tok, ok, err, wantValid)
			}
		}
	}

	// Background renewal keeps the lease past two TTLs.
	time.Sleep(2 * ttl)
	if lost.count() != 0 {
		t.Fatalf("lease lost while every node was up:\n%s", r.logs)
	}
	if ok, err := b.ValidateLease(ctx, "p", lease.FencingToken); !ok || err != nil {
		t.Fatalf("after %s: ValidateLease = %v, %v; want true", 2*ttl, ok, err)
	}
	for i := range r.nodes {
		pttl := r.client(r.nodes[i]).PTTL(ctx, quorum.Keys{Prefix: DefaultKeyPrefix}.Lease("p")).Val()
		if pttl <= 0 || pttl > ttl {
			t.Errorf("node %d: lease PTTL %s; want renewed within (0, %s]", i, pttl, ttl)
		}
	}
	if err := a.RenewLease(ctx, "p"); err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	mustNotAcquire(t, b, "p", runtime.RunNumberAuto)

	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	// The release returns once a majority deleted the lease; the last node
	// follows in the background.
	waitUntil(t, time.Second, "the lease gone from every node", func() bool {
		got := r.leaseTokens("p", 0, 1, 2)
		return got[0]+got[1]+got[2] == ""
	})
	if ok, err := b.ValidateLease(ctx, "p", lease.FencingToken); ok || err != nil {
		t.Errorf("ValidateLease of a released token = %v, %v; want false, nil", ok, err)
	}
	if err := a.ReleaseLease(ctx, "p"); !errors.Is(err, ErrLeaseNotHeld) {
		t.Errorf("second ReleaseLease = %v; want ErrLeaseNotHeld", err)
	}
	next := mustAcquire(t, b, "p", runtime.RunNumberAuto)
	if next.FencingToken <= lease.FencingToken {
		t.Fatalf("next token %d not above %d", next.FencingToken, lease.FencingToken)
	}

	rs := redlockStatus(t, b)
	if rs.Quorum != 2 || len(rs.Nodes) != 3 || rs.ReachableNodes != 3 {
		t.Errorf("status %+v: want quorum 2 of 3 nodes, all reachable", rs)
	}
	for i, n := range rs.Nodes {
		if n.URL != r.nodes[i].URL() || !n.Reachable || !n.Contacted || n.Primary {
			t.Errorf("status node %d = %+v", i, n)
		}
	}
	raw, err := json.Marshal(b.Status())
	if err != nil || !strings.Contains(string(raw), `"failed_acquisitions":`) || !strings.Contains(string(raw), `"reachable":true`) {
		t.Errorf("status JSON %s (%v) lacks the quorum fields", raw, err)
	}
}

func TestRedlockSlotRuleAndOnceHoldEvenWhenThePrimaryForgets(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	a := r.started(r.options(2*time.Second), "a")
	b := r.started(r.options(2*time.Second), "b")

	slot := time.Now().Unix() - 120
	first := mustAcquire(t, a, "p", slot)
	if first.RunNumber != slot {
		t.Fatalf("run number %d, want the slot %d", first.RunNumber, slot)
	}
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatalf("CompleteLease: %v", err)
	}
	for _, s := range []int64{slot, slot - 60} {
		if ok, err := b.TryAcquireLease(ctx, "p", slotRun(s)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
			t.Fatalf("slot %d after completion: %v, %v; want ErrSlotCompleted", s, ok, err)
		}
	}
	mustAcquire(t, a, "once", runtime.RunNumberOnce)
	if err := a.CompleteLease(ctx, "once"); err != nil {
		t.Fatalf("CompleteLease(once): %v", err)
	}

	// The primary restarts empty: its slot record and Once marker are gone,
	// but the quorum nodes' copies still refuse the completed runs.
	r.primary.Restart()
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(slot)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("completed slot after the primary forgot it: %v, %v; want ErrSlotCompleted", ok, err)
	}
	if ok, err := b.TryAcquireLease(ctx, "once", runtime.RunNumberOnce); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("completed Once run after the primary forgot it: %v, %v; want ErrSlotCompleted", ok, err)
	}
	if got := r.leaseTokens("p", 0, 1, 2); got[0]+got[1]+got[2] != "" {
		t.Errorf("refused attempt left tokens %q on the nodes", got)
	}
	later := mustAcquire(t, b, "p", liveSlot()) // after the epoch the restart made
	if later.FencingToken <= first.FencingToken {
		t.Fatalf("token %d after the primary restarted is not above %d", later.FencingToken, first.FencingToken)
	}
}

func TestRedlockRaceHasOneHolderAtAnyInstant(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	coords := []*RedisWorkerCoordinator{
		r.started(r.options(10*time.Second), "a"),
		r.started(r.options(10*time.Second), "b"),
	}
	byWorker := raceForOneLease(t, coords, 50)
	if byWorker["a"] == 0 || byWorker["b"] == 0 {
		t.Errorf("acquisitions by worker %v; want both coordinators to win some", byWorker)
	}
}

func TestRedlockPrimaryMayBeAQuorumNode(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 2)
	opts := r.options(2 * time.Second)
	opts.RedlockRedisURLs = append([]string{r.primary.URL()}, opts.RedlockRedisURLs...)
	a := r.started(opts, "a")
	b := r.started(opts, "b")
	rs := redlockStatus(t, a)
	if !rs.Nodes[0].Primary || rs.Nodes[1].Primary || rs.Nodes[2].Primary {
		t.Fatalf("status nodes %+v: want node 0 marked as the primary", rs.Nodes)
	}
	done := time.Now().Unix() - 120
	lease := mustAcquire(t, a, "p", done)
	// The quorum lease lives beside the primary's own keys.
	if v, err := r.client(r.primary).Get(ctx, quorum.Keys{Prefix: DefaultKeyPrefix}.Lease("p")).Result(); err != nil || !strings.HasPrefix(v, strconv.FormatInt(lease.FencingToken, 10)+" ") {
		t.Fatalf("primary's quorum lease %q (%v); want token %d", v, err, lease.FencingToken)
	}
	mustNotAcquire(t, b, "p", done)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatalf("CompleteLease: %v", err)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(done)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("completed slot: %v, %v; want ErrSlotCompleted", ok, err)
	}
}

func TestRedlockRoundTripsPerOperation(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	c := r.started(r.options(time.Minute), "a")
	b := quorumOf(t, c)
	primary := &tripCounter{}
	c.client.AddHook(primary)
	nodes := make([]*tripCounter, len(b.redlock.Nodes()))
	for i, n := range b.redlock.Nodes() {
		nodes[i] = &tripCounter{}
		n.Client().AddHook(nodes[i])
	}
	mustAcquire(t, c, "warm", runtime.RunNumberAuto) // scripts cached, connections open
	if err := c.ReleaseLease(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the release's last node answers

	check := func(what string, wantPrimary int64, f func()) {
		t.Helper()
		p0 := primary.trips.Load()
		n0 := make([]int64, len(nodes))
		for i, h := range nodes {
			n0[i] = h.trips.Load()
		}
		f()
		// Requests a decided operation no longer waits for end in the
		// background; count them too.
		waitUntil(t, time.Second, what+" requests to every node", func() bool {
			for i, h := range nodes {
				if h.trips.Load()-n0[i] < 1 {
					return false
				}
			}
			return primary.trips.Load()-p0 >= wantPrimary
		})
		time.Sleep(20 * time.Millisecond)
		if got := primary.trips.Load() - p0; got != wantPrimary {
			t.Errorf("%s: %d round trips to the primary, want %d", what, got, wantPrimary)
		}
		for i, h := range nodes {
			if got := h.trips.Load() - n0[i]; got != 1 {
				t.Errorf("%s: %d round trips to node %d, want 1", what, got, i)
			}
		}
	}
	check("acquire", 1, func() { mustAcquire(t, c, "p", runtime.RunNumberAuto) })
	check("renew", 0, func() {
		if err := c.RenewLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	})
	lease, _ := c.CurrentLease("p")
	check("validate", 0, func() {
		if ok, err := c.ValidateLease(ctx, "p", lease.FencingToken); !ok || err != nil {
			t.Fatalf("ValidateLease = %v, %v", ok, err)
		}
	})
	check("release", 1, func() { // the reservation, in the background
		if err := c.ReleaseLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRedlockStatusNeverShowsPasswords(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 2)
	// Node 2 is given a wrong password: it refuses every request, and
	// neither the status nor an error may show what was sent.
	const secret = "hunter2-wrong"
	locked := redistest.Start(t, redistest.WithPassword("the-right-one"))
	opts := r.options(2 * time.Second)
	opts.RedlockRedisURLs = append(opts.RedlockRedisURLs, "redis://:"+secret+"@"+locked.Addr()+"/0")
	c := r.started(opts, "a")
	mustAcquire(t, c, "p", runtime.RunNumberAuto)
	raw, err := json.Marshal(c.Status())
	if err != nil {
		t.Fatal(err)
	}
	rs := redlockStatus(t, c)
	if rs.Nodes[2].Failures == 0 || rs.Nodes[2].LastError == "" {
		t.Errorf("node 2 with a bad password: status %+v; want its failures shown", rs.Nodes[2])
	}
	if strings.Contains(string(raw), secret) || strings.Contains(r.logs.String(), secret) {
		t.Fatalf("password shown:\n%s\n%s", raw, r.logs)
	}
	if !strings.Contains(string(raw), "xxxxx@"+locked.Addr()) {
		t.Errorf("status %s does not name node 2 by its redacted URL", raw)
	}
}

func TestRedlockStartsWithNodesDown(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	r.nodes[0].Kill()
	r.nodes[1].Kill()
	c := r.started(r.options(2*time.Second), "a")
	if err := c.Healthy(ctx); !errors.Is(err, ErrQuorumNotReached) {
		t.Fatalf("Healthy with 1 of 3 nodes = %v; want ErrQuorumNotReached", err)
	}
	mustFailSafe(t, c, "p", runtime.RunNumberAuto, ErrQuorumNotReached)
	r.nodes[0].Restart()
	waitUntil(t, 5*time.Second, "healthy again", func() bool { return c.Healthy(context.Background()) == nil })
	mustAcquire(t, c, "p", runtime.RunNumberAuto)
}
