package distributed

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestRedlockOneNodeDownStillAcquiresAndRenews(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = 1500 * time.Millisecond
	a := r.started(r.options(ttl), "a")
	b := r.started(r.options(ttl), "b")
	lost := recordLost(a)

	// Killed while a lease is held: renewals carry on with two of three.
	lease := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	r.nodes[2].Kill()
	time.Sleep(2 * ttl)
	if lost.count() != 0 {
		t.Fatalf("lease lost with two of three nodes up:\n%s", r.logs)
	}
	if ok, err := b.ValidateLease(ctx, "p", lease.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease with two of three nodes = %v, %v; want true", ok, err)
	}
	mustNotAcquire(t, b, "p", runtime.RunNumberAuto)
	if rs := redlockStatus(t, a); rs.Nodes[2].Reachable || rs.ReachableNodes != 2 || rs.Nodes[2].LastError == "" {
		t.Errorf("status %+v: want node 2 shown unreachable with its error", rs)
	}
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatalf("ReleaseLease with a node down: %v", err)
	}

	// Down before the acquisition: it still holds.
	next := mustAcquire(t, b, "p", runtime.RunNumberAuto)
	if next.FencingToken <= lease.FencingToken {
		t.Fatalf("token %d not above %d", next.FencingToken, lease.FencingToken)
	}
	if got := r.leaseTokens("p", 0, 1); got[0] != strconv.FormatInt(next.FencingToken, 10) || got[1] != got[0] {
		t.Fatalf("live nodes hold %q; want token %d on both", got, next.FencingToken)
	}
	time.Sleep(ttl)
	if err := b.RenewLease(ctx, "p"); err != nil {
		t.Fatalf("RenewLease with a node down: %v", err)
	}
	if _, held := b.CurrentLease("p"); !held {
		t.Fatal("lease lost with two of three nodes up")
	}
}

func TestRedlockTwoOfThreeDownFailsSafe(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = 1500 * time.Millisecond // deadline 1 s, renewal every 0.5 s
	a := r.started(r.options(ttl), "a")
	b := r.started(r.options(ttl), "b")
	runCtx, lostAt := runUnderLease(a)
	mustAcquire(t, a, "p", runtime.RunNumberAuto)
	time.Sleep(600 * time.Millisecond) // a renewal went through

	r.nodes[0].Kill()
	r.nodes[1].Kill()
	killed := time.Now()
	held, _ := a.CurrentLease("p")
	at := waitLost(t, lostAt, 3*time.Second, "no lost callback with two of three nodes down")
	if !at.Before(held.ExpiresAt) {
		t.Errorf("lease lost at %s, not before its validity ended (%s)", at.Format(time.StampMilli), held.ExpiresAt.Format(time.StampMilli))
	}
	if after := at.Sub(killed); after > time.Second+200*time.Millisecond {
		t.Errorf("lease lost %s after the kill; want within the 1 s renewal deadline", after)
	}
	if runCtx.Err() == nil {
		t.Fatal("run context not cancelled")
	}
	if _, ok := a.CurrentLease("p"); ok {
		t.Fatal("lost lease still current")
	}

	failedBefore := redlockStatus(t, b).FailedAcquisitions
	err := mustFailSafe(t, b, "q", runtime.RunNumberAuto, ErrQuorumNotReached)
	if rs := redlockStatus(t, b); rs.FailedAcquisitions != failedBefore+1 {
		t.Errorf("failed acquisitions %d, want %d", rs.FailedAcquisitions, failedBefore+1)
	}
	for _, want := range []string{"of 3 nodes accepted", "2 needed", "RedlockRedisURLs[0] (" + r.nodes[0].URL() + ")"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if r.reservationExists("q") {
		t.Error("the failed attempt left its reservation on the primary")
	}
	if got := r.leaseTokens("q", 2); got[0] != "" {
		t.Errorf("the failed attempt left token %s on node 2", got[0])
	}
	if err := b.Healthy(ctx); !errors.Is(err, ErrQuorumNotReached) {
		t.Errorf("Healthy = %v; want ErrQuorumNotReached", err)
	}

	// Back once a majority is: the leftover of the lost lease has expired
	// by then, or expires within a TTL.
	r.nodes[0].Restart()
	waitUntil(t, 2*ttl, "an acquisition after node 0 came back", func() bool {
		ok, _ := b.TryAcquireLease(context.Background(), "p", runtime.RunNumberAuto)
		return ok
	})
}

func TestRedlockNodeRestartedEmptyKeepsOneHolder(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = 2 * time.Second
	a := r.started(r.options(ttl), "a")
	b := r.started(r.options(ttl), "b")
	lost := recordLost(a)
	first := mustAcquire(t, a, "p", runtime.RunNumberAuto)

	// Node 0 and the primary both lose everything: b's token is minted and
	// node 0 accepts it, but nodes 1 and 2 still hold a's lease.
	r.nodes[0].Restart()
	r.primary.Restart()
	mustNotAcquire(t, b, "p", runtime.RunNumberAuto)
	if rs := redlockStatus(t, b); rs.FailedAcquisitions != 1 {
		t.Errorf("failed acquisitions %d, want 1", rs.FailedAcquisitions)
	}
	if _, held := b.CurrentLease("p"); held {
		t.Fatal("b holds the lease while a does")
	}
	// b released its attempt on node 0; on a loaded machine the release to
	// the freshly restarted node can time out, and then the leftover
	// expires with its TTL instead (after which a's renewal may put a's
	// lease there).
	mine := strconv.FormatInt(first.FencingToken, 10)
	waitUntil(t, ttl+time.Second, "node 0 free of b's failed attempt", func() bool {
		got := r.leaseTokens("p", 0)[0]
		return got == "" || got == mine
	})
	time.Sleep(ttl)
	if lost.count() != 0 {
		t.Fatalf("a lost its lease though a majority holds it:\n%s", r.logs)
	}
	if ok, err := b.ValidateLease(ctx, "p", first.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease(a's token) = %v, %v; want true", ok, err)
	}

	// A rolling restart of every node, one after the other, with no
	// contender about: each renewal puts a's lease back on the node that
	// came back empty, so the lease always has its majority. Without that,
	// the second restart would leave it on one node and lose it.
	want := strconv.FormatInt(first.FencingToken, 10)
	for i := range r.nodes {
		r.nodes[i].Restart()
		waitUntil(t, 2*ttl, "the lease put back on node "+strconv.Itoa(i), func() bool {
			return r.leaseTokens("p", i)[0] == want
		})
	}
	if lost.count() != 0 {
		t.Fatalf("a lost its lease during a rolling restart:\n%s", r.logs)
	}
	waitUntil(t, time.Second, "the three put-backs counted", func() bool { return redlockStatus(t, a).Reseated >= 3 })
	if ok, err := b.ValidateLease(ctx, "p", first.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease after the rolling restart = %v, %v; want true", ok, err)
	}
	mustNotAcquire(t, b, "p", runtime.RunNumberAuto)

	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	next := mustAcquire(t, b, "p", runtime.RunNumberAuto)
	if next.FencingToken <= first.FencingToken {
		t.Fatalf("token %d after the restarts is not above %d", next.FencingToken, first.FencingToken)
	}
}

func TestRedlockPrimaryDownNoNewLease(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 3)
	const ttl = 1500 * time.Millisecond
	a := r.started(r.options(ttl), "a")
	b := r.started(r.options(ttl), "b")
	lost := recordLost(a)
	first := mustAcquire(t, a, "p", runtime.RunNumberAuto)

	r.primary.Kill()
	// A held lease lives on the quorum: renewals do not need the primary.
	time.Sleep(2 * ttl)
	if lost.count() != 0 {
		t.Fatalf("lease lost when only the primary went down:\n%s", r.logs)
	}
	if ok, err := a.ValidateLease(ctx, "p", first.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease without the primary = %v, %v; want true", ok, err)
	}
	// No new lease, even with every quorum node healthy: no token.
	err := mustFailSafe(t, b, "other", runtime.RunNumberAuto, nil)
	if !strings.Contains(err.Error(), "primary "+r.primary.URL()) {
		t.Errorf("error %q does not name the primary", err)
	}
	if err := b.Healthy(ctx); err == nil {
		t.Error("Healthy = nil without the primary")
	}
	// A release needs the quorum only.
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Errorf("ReleaseLease without the primary: %v", err)
	}
	waitUntil(t, time.Second, "the lease gone from every node", func() bool {
		got := r.leaseTokens("p", 0, 1, 2)
		return got[0]+got[1]+got[2] == ""
	})
	mustFailSafe(t, a, "p", runtime.RunNumberAuto, nil)
	if _, held := a.CurrentLease("p"); held {
		t.Fatal("lease granted without the primary")
	}

	r.primary.Restart()
	waitUntil(t, 5*time.Second, "an acquisition once the primary is back", func() bool {
		ok, _ := b.TryAcquireLease(context.Background(), "p", runtime.RunNumberAuto)
		return ok
	})
	if next, _ := b.CurrentLease("p"); next.FencingToken <= first.FencingToken {
		t.Fatalf("token %d after the primary restarted empty is not above %d", next.FencingToken, first.FencingToken)
	}
}

func TestRedlockFiveNodesTolerateTwoStopped(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 5)
	const ttl = 2 * time.Second // deadline 1.33 s, renewal every 0.67 s, node timeout 200 ms
	a := r.started(r.options(ttl), "a")
	b := r.started(r.options(ttl), "b")
	if rs := redlockStatus(t, a); rs.Quorum != 3 {
		t.Fatalf("quorum %d of 5, want 3", rs.Quorum)
	}
	_, lostAt := runUnderLease(a)

	r.nodes[0].Pause()
	r.nodes[1].Pause()
	t.Cleanup(func() { r.nodes[0].Resume(); r.nodes[1].Resume() })
	lease := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	time.Sleep(ttl + ttl/2)
	select {
	case <-lostAt:
		t.Fatalf("lease lost with three of five nodes answering:\n%s", r.logs)
	default:
	}
	if ok, err := b.ValidateLease(ctx, "p", lease.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease with two of five stopped = %v, %v; want true", ok, err)
	}
	mustNotAcquire(t, b, "p", runtime.RunNumberAuto)

	r.nodes[2].Pause()
	t.Cleanup(r.nodes[2].Resume)
	stopped := time.Now()
	at := waitLost(t, lostAt, 3*time.Second, "no lost callback with three of five nodes stopped")
	if after := at.Sub(stopped); after > 1500*time.Millisecond {
		t.Errorf("lease lost %s after the third stop; want within the renewal deadline", after)
	}
	mustFailSafe(t, b, "q", runtime.RunNumberAuto, ErrQuorumNotReached)
}
