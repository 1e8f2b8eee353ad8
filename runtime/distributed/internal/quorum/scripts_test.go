package quorum

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// scriptNode runs the quorum scripts directly against one real server.
type scriptNode struct {
	t *testing.T
	c *redis.Client
	k []string // lease, seen, done, once
}

func newScriptNode(t *testing.T) *scriptNode {
	t.Helper()
	srv := redistest.Start(t)
	opts, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return &scriptNode{t: t, c: c, k: Keys{Prefix: "t:"}.NodeKeys("p")}
}

func qref(owner string, token, mode int64) Lease {
	return Lease{PipelineID: "p", Owner: owner, Token: token, Mode: mode}
}

func (n *scriptNode) acquire(r Lease) []int64 {
	n.t.Helper()
	res, err := leasebackend.QuorumAcquireScript.Run(context.Background(), n.c, n.k, nodeValue(r), r.Token, r.Mode, 60000, r.Owner).Int64Slice()
	if err != nil {
		n.t.Fatalf("acquire %+v: %v", r, err)
	}
	return res
}

func (n *scriptNode) release(r Lease, completed bool) int64 {
	n.t.Helper()
	flag := 0
	if completed {
		flag = 1
	}
	res, err := leasebackend.QuorumReleaseScript.Run(context.Background(), n.c, n.k, nodeValue(r), r.Token, r.Mode, flag, 120000, 120000).Int64()
	if err != nil {
		n.t.Fatalf("release %+v: %v", r, err)
	}
	return res
}

func (n *scriptNode) renew(r Lease) int64 {
	n.t.Helper()
	res, err := leasebackend.QuorumRenewScript.Run(context.Background(), n.c, n.k, nodeValue(r), 60000, r.Mode).Int64()
	if err != nil {
		n.t.Fatalf("renew %+v: %v", r, err)
	}
	return res
}

func (n *scriptNode) get(i int) string { return n.c.Get(context.Background(), n.k[i]).Val() }

func wantReply(t *testing.T, what string, got, expect []int64) {
	t.Helper()
	if !slices.Equal(got, expect) {
		t.Errorf("%s = %v, want %v", what, got, expect)
	}
}

func TestQuorumAcquireScriptRules(t *testing.T) {
	t.Parallel()
	n := newScriptNode(t)
	a1 := qref("a#1", 100, runtime.RunNumberAuto)
	wantReply(t, "acquire on a free node", n.acquire(a1), []int64{1})
	if n.get(0) != nodeValue(a1) || n.c.PTTL(context.Background(), n.k[0]).Val() <= 59*time.Second {
		t.Fatalf("lease %q with PTTL %s", n.get(0), n.c.PTTL(context.Background(), n.k[0]).Val())
	}
	wantReply(t, "a retried request", n.acquire(a1), []int64{1})
	wantReply(t, "another owner", n.acquire(qref("b#1", 101, 0)), []int64{0, 100})

	a2 := qref("a#1", 102, 0)
	wantReply(t, "the same owner with a newer token replaces its leftover", n.acquire(a2), []int64{1})
	wantReply(t, "a late request of the same owner's earlier attempt", n.acquire(qref("a#1", 101, 0)), []int64{-2, 102})
	if n.get(0) != nodeValue(a2) {
		t.Fatalf("a late request replaced the lease: %q", n.get(0))
	}

	if n.release(a2, false) != 1 || n.get(0) != "" || n.get(1) != "102" {
		t.Fatalf("release: lease %q, seen %q; want gone and 102", n.get(0), n.get(1))
	}
	wantReply(t, "the released token arriving late", n.acquire(a2), []int64{-2, 102})
	wantReply(t, "an older token", n.acquire(qref("c#1", 90, 0)), []int64{-2, 102})
	if n.get(0) != "" {
		t.Fatalf("a stale request set %q", n.get(0))
	}
	wantReply(t, "a newer token", n.acquire(qref("c#1", 103, 0)), []int64{1})
}

func TestQuorumReleaseScriptRules(t *testing.T) {
	t.Parallel()
	n := newScriptNode(t)
	a := qref("a#1", 200, 1_800_000_000)
	n.acquire(a)
	if got := n.release(qref("b#1", 201, 1_800_000_000), false); got != 0 || n.get(0) != nodeValue(a) {
		t.Fatalf("release by another owner = %d, lease %q", got, n.get(0))
	}
	if n.get(1) != "201" {
		t.Fatalf("seen %q after a foreign release; want 201 (its request may still come)", n.get(1))
	}
	if got := n.release(a, true); got != 1 || n.get(0) != "" {
		t.Fatalf("complete = %d, lease %q", got, n.get(0))
	}
	if n.get(1) != "201" || n.get(2) != "1800000000" {
		t.Fatalf("after completing: seen %q (must not go down), done %q", n.get(1), n.get(2))
	}
	// An earlier slot completing later does not lower the record.
	n.release(qref("a#1", 150, 1_799_999_940), true)
	if n.get(2) != "1800000000" {
		t.Fatalf("done %q after an earlier slot completed; want 1800000000", n.get(2))
	}
	wantReply(t, "the completed slot", n.acquire(qref("c#1", 300, 1_800_000_000)), []int64{-1})
	wantReply(t, "an earlier slot", n.acquire(qref("c#1", 301, 1_799_999_940)), []int64{-1})
	wantReply(t, "a later slot", n.acquire(qref("c#1", 302, 1_800_000_060)), []int64{1})

	once := qref("o#1", 400, runtime.RunNumberOnce)
	n.k = Keys{Prefix: "t:"}.NodeKeys("once")
	wantReply(t, "the Once run", n.acquire(once), []int64{1})
	n.release(once, true)
	if pttl := n.c.PTTL(context.Background(), n.k[3]).Val(); pttl <= 0 {
		t.Fatalf("once marker PTTL %s", pttl)
	}
	wantReply(t, "the Once run after it completed", n.acquire(qref("o#2", 401, runtime.RunNumberOnce)), []int64{-1})
}

func TestQuorumRenewScriptRules(t *testing.T) {
	t.Parallel()
	n := newScriptNode(t)
	ctx := context.Background()
	a := qref("a#1", 500, 1_800_000_000)
	n.acquire(a)
	n.c.PExpire(ctx, n.k[0], time.Second)
	if got := n.renew(a); got != 1 || n.c.PTTL(ctx, n.k[0]).Val() <= 59*time.Second {
		t.Fatalf("renew = %d, PTTL %s", got, n.c.PTTL(ctx, n.k[0]).Val())
	}
	if got := n.renew(qref("b#1", 500, 1_800_000_000)); got != 0 {
		t.Fatalf("renew by another owner = %d", got)
	}
	if got := n.renew(qref("a#1", 499, 1_800_000_000)); got != 0 || n.get(0) != nodeValue(a) {
		t.Fatalf("renew of an older token = %d, lease %q", got, n.get(0))
	}

	// The node loses its data: the lease is put back.
	n.c.FlushDB(ctx)
	if got := n.renew(a); got != 2 || n.get(0) != nodeValue(a) {
		t.Fatalf("renew on an emptied node = %d, lease %q; want it put back", got, n.get(0))
	}
	// Released: a late renewal does not bring it back.
	n.release(a, false)
	if got := n.renew(a); got != 0 || n.get(0) != "" {
		t.Fatalf("renew after the release = %d, lease %q", got, n.get(0))
	}
	// Completed slot: not put back either.
	n.c.FlushDB(ctx)
	n.c.Set(ctx, n.k[2], "1800000000", time.Minute)
	if got := n.renew(a); got != 0 || n.get(0) != "" {
		t.Fatalf("renew of a completed slot = %d, lease %q", got, n.get(0))
	}
}
