package distributed

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// The single-node scripts on a real redis-server: the lease list, the token
// counter and the done slot stay exactly as the rules say through refused
// attempts, a stale counter, FencingKeyTTL and a plain LREM release.

const (
	realLease = "agora:distributed:lease:{p}"
	realToken = "agora:distributed:token:{p}"
	realDone  = "agora:distributed:completed:{p}"
)

func TestIntegrationRefusedAcquireChangesNothing(t *testing.T) {
	r := newReal(t)
	opts := r.options(10 * time.Second)
	opts.FencingKeyTTL = time.Hour
	a := r.started(opts, "a")
	b := r.started(opts, "b")
	rc := r.client(0)
	lease := mustAcquire(t, a, "p", 100)

	held, err := rc.LRange(ctx, realLease, 0, -1).Result()
	if err != nil || len(held) != 1 || !slices.Equal(held, []string{fmt.Sprintf("%d 100 %s", lease.FencingToken, a.owner)}) {
		t.Fatalf("lease list %q (%v), want the one value of a's lease", held, err)
	}
	leaseTTL := rc.PTTL(ctx, realLease).Val()
	tokenTTL := rc.PTTL(ctx, realToken).Val()
	if leaseTTL <= 9*time.Second || tokenTTL <= 59*time.Minute {
		t.Fatalf("TTLs lease %s token %s, want about 10s and 1h", leaseTTL, tokenTTL)
	}

	for _, run := range []int64{runtime.RunNumberAuto, runtime.RunNumberOnce, 200} {
		if ok, err := b.TryAcquireLease(ctx, "p", slotRun(run)); ok || err != nil {
			t.Fatalf("run %d while held: %v, %v; want false, nil", run, ok, err)
		}
	}
	if after := rc.LRange(ctx, realLease, 0, -1).Val(); !slices.Equal(after, held) {
		t.Errorf("lease list after refused attempts %q, want %q", after, held)
	}
	if ttl := rc.PTTL(ctx, realLease).Val(); ttl <= 0 || ttl > leaseTTL {
		t.Errorf("lease TTL after refused attempts %s, want at most %s and still set", ttl, leaseTTL)
	}
	if got := rc.Get(ctx, realToken).Val(); got != strconv.FormatInt(lease.FencingToken, 10)+" 100" {
		t.Errorf("counter after refused attempts %s, want %d and run 100", got, lease.FencingToken)
	}
	if ttl := rc.PTTL(ctx, realToken).Val(); ttl <= 59*time.Minute {
		t.Errorf("counter TTL after refused attempts %s, want about 1h", ttl)
	}

	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if n := rc.Exists(ctx, realLease).Val(); n != 0 {
		t.Error("lease list left behind after completion")
	}
	if got := rc.ZScore(ctx, realDone, "slot").Val(); got != 100 {
		t.Errorf("done slot %v, want 100", got)
	}
}

func TestIntegrationTokensIncreaseAfterAStaleCounter(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(10*time.Second), "a")
	rc := r.client(0)
	var tokens []int64
	for i := 0; i < 50; i++ {
		tokens = append(tokens, mustAcquire(t, c, "p", runtime.RunNumberAuto).FencingToken)
		if err := c.ReleaseLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	// What a replica that missed the last writes, or an older AOF file,
	// holds: a counter behind the tokens already handed out.
	rc.Set(ctx, realToken, strconv.FormatInt(tokens[0], 10), 0)
	next := mustAcquire(t, c, "p", runtime.RunNumberAuto).FencingToken
	if next <= tokens[len(tokens)-1] {
		t.Fatalf("token after a stale counter %d, not above %d handed out before", next, tokens[len(tokens)-1])
	}
	// A counter ahead of the clock (a clock set back): last + 1.
	ahead := next + int64(time.Hour/time.Microsecond)
	if err := c.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	rc.Set(ctx, realToken, strconv.FormatInt(ahead, 10), 0)
	if got := mustAcquire(t, c, "p", runtime.RunNumberAuto).FencingToken; got != ahead+1 {
		t.Fatalf("token with the counter ahead of the clock %d, want %d", got, ahead+1)
	}
	if got, want := rc.Get(ctx, realToken).Val(), fmt.Sprint(ahead+1, " ", ahead+1); got != want {
		t.Fatalf("counter %s, want %s: the token and its run (auto runs are numbered by their token)", got, want)
	}
}

func TestIntegrationReleaseIsOneLREM(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	rc := r.client(0)
	lease := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	// Another owner's value of the same token, and this owner's value of
	// another token, are both left alone.
	for _, v := range []string{
		fmt.Sprintf("%d %d other#0000000000000000", lease.FencingToken, lease.RunNumber),
		fmt.Sprintf("%d %d %s", lease.FencingToken-1, lease.RunNumber, a.owner),
	} {
		owned, err := a.backend.release(ctx, leaseRef{PipelineID: "p", stored: v})
		if owned || err != nil {
			t.Fatalf("release with %q: %v, %v; want false", v, owned, err)
		}
	}
	if n := rc.LLen(ctx, realLease).Val(); n != 1 {
		t.Fatalf("lease list length %d after foreign releases, want 1", n)
	}
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if n := rc.Exists(ctx, realLease).Val(); n != 0 {
		t.Fatal("lease still there after release")
	}
}
