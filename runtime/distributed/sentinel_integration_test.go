package distributed

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// Coordinators on a primary found through Sentinels: after a failover,
// forced or after SIGKILL of the primary, leases resume on the new primary,
// tokens keep increasing even when the new primary missed the last writes,
// and fencing refuses the old holder.

// sentinelTTL gives a renewal every 1.5 s and a renewal deadline of 3 s:
// longer than a failover on loopback (about 1.5 s with the group's 500 ms
// down-after), so a replicated lease survives one.
const sentinelTTL = 4500 * time.Millisecond

// sentinelPassword protects the data servers; its @ # & must be encoded in
// the URL's password parameter.
const sentinelPassword = "m@ster#pw&1"

type sentinelReal struct {
	t      *testing.T
	g      *redistest.SentinelGroup
	logs   *logBuffer
	prefix string
}

func newSentinelReal(t *testing.T) *sentinelReal {
	t.Helper()
	return &sentinelReal{t: t, g: redistest.StartSentinels(t, redistest.WithPassword(sentinelPassword)), logs: &logBuffer{}}
}

// sub returns r for subtest t with its own key prefix and log.
func (r *sentinelReal) sub(t *testing.T) *sentinelReal {
	return &sentinelReal{t: t, g: r.g, logs: &logBuffer{}, prefix: "agora:" + t.Name() + ":"}
}

func (r *sentinelReal) started(workerID string) *RedisWorkerCoordinator {
	r.t.Helper()
	c, err := NewRedisWorkerCoordinator(Options{
		KeyPrefix: r.prefix,
		RedisURL:  r.g.URL(),
		LeaseTTL:  sentinelTTL,
		Logger:    slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx, workerID, []string{"p"}); err != nil {
		r.t.Fatal(err)
	}
	return c
}

// checkNoPassword fails the test if the logs or a coordinator's status show
// the data servers' password in any spelling.
func (r *sentinelReal) checkNoPassword(coords ...*RedisWorkerCoordinator) {
	r.t.Helper()
	texts := []string{r.logs.String()}
	for _, c := range coords {
		raw, _ := json.Marshal(c.Status())
		texts = append(texts, string(raw))
	}
	for _, text := range texts {
		for _, spelling := range []string{"m@ster", "m%40ster", "pw&1", "pw%261"} {
			if strings.Contains(text, spelling) {
				r.t.Errorf("the password shows (%q) in %s", spelling, text)
			}
		}
	}
}

// data returns a plain client on data server d.
func (r *sentinelReal) data(d *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: d.Addr(), Password: sentinelPassword})
	r.t.Cleanup(func() { _ = c.Close() })
	return c
}

// acquireEventually retries until c gets the lease: right after a failover
// the first requests may still reach the old primary or find none.
func acquireEventually(t *testing.T, c *RedisWorkerCoordinator, pipelineID string, timeout time.Duration) runtime.Lease {
	t.Helper()
	waitUntil(t, timeout, "a lease on the new primary", func() bool {
		ok, err := c.TryAcquireLease(ctx, pipelineID, runtime.RunNumberAuto)
		return ok && err == nil
	})
	lease, _ := c.CurrentLease(pipelineID)
	return lease
}

// fencedStore is a downstream store that keeps the highest token it has
// seen and refuses writes with a lower one.
type fencedStore struct {
	mu      sync.Mutex
	highest int64
	writes  []int64
}

func (s *fencedStore) write(token int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return false
	}
	s.highest = token
	s.writes = append(s.writes, token)
	return true
}

// TestSentinelFailovers fails one group over twice: forced, then back
// after SIGKILL of the new primary (starting a group takes about two
// seconds).
func TestSentinelFailovers(t *testing.T) {
	r := newSentinelReal(t)
	if !t.Run("forced failover", func(t *testing.T) { testSentinelForcedFailover(t, r.sub(t)) }) {
		return
	}
	t.Run("primary killed", func(t *testing.T) { testSentinelPrimaryKilled(t, r.sub(t)) })
}

func testSentinelForcedFailover(t *testing.T, r *sentinelReal) {
	a := r.started("a")
	b := r.started("b")
	lost := recordLost(a)
	if st := a.Status().(CoordinatorStatus); st.Topology != "sentinel" || st.MasterName != redistest.MasterName || len(st.Nodes) != 3 {
		t.Fatalf("status topology %q master %q nodes %v", st.Topology, st.MasterName, st.Nodes)
	}
	first := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	// The lease reached the replica before the failover, as it does within
	// a millisecond on a healthy link.
	if r.g.Master() != r.g.Data[0] {
		t.Fatal("the group does not start on its first data server")
	}
	replica := r.data(r.g.Data[1])
	waitUntil(t, 5*time.Second, "the lease on the replica", func() bool {
		return replica.Exists(ctx, keys{prefix: r.prefix}.lease("p")).Val() == 1
	})

	start := time.Now()
	if next := r.g.Failover(10 * time.Second); next != r.g.Data[1] {
		t.Fatal("the replica was not promoted")
	}
	failedOver := time.Now()
	other := acquireEventually(t, b, "other", 10*time.Second)
	t.Logf("failover %s, first lease on the new primary %s after it", failedOver.Sub(start), time.Since(failedOver))

	// The replicated lease lives on: b is refused, the token validates, and
	// a's renewals go to the new primary.
	if ok, err := b.TryAcquireLease(ctx, "p", runtime.RunNumberAuto); ok || err != nil {
		t.Fatalf("b acquired a's replicated lease: %v, %v", ok, err)
	}
	if ok, err := b.ValidateLease(ctx, "p", first.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease(a's token) = %v, %v", ok, err)
	}
	waitUntil(t, 3*sentinelTTL/3+time.Second, "a renewal on the new primary", func() bool {
		cur, held := a.CurrentLease("p")
		return held && cur.ExpiresAt.After(failedOver.Add(sentinelTTL))
	})
	if n := lost.count(); n != 0 {
		t.Fatalf("%d leases lost though the new primary had them", n)
	}

	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	second := mustAcquire(t, b, "p", runtime.RunNumberAuto)
	if second.FencingToken <= first.FencingToken || other.FencingToken <= first.FencingToken {
		t.Fatalf("tokens %d, %d after the failover, not above %d", second.FencingToken, other.FencingToken, first.FencingToken)
	}
	if ok, _ := b.ValidateLease(ctx, "p", first.FencingToken); ok {
		t.Fatal("the released token still validates")
	}
	if ok, err := a.ValidateLease(ctx, "p", second.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease(b's token) = %v, %v", ok, err)
	}
	r.checkNoPassword(a, b)
}

func testSentinelPrimaryKilled(t *testing.T, r *sentinelReal) {
	a := r.started("a")
	b := r.started("b")
	runCtx, lostAt := runUnderLease(a)
	first := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	var store fencedStore
	if !store.write(first.FencingToken) {
		t.Fatal("first write refused")
	}

	old := r.g.Master()
	old.Kill()
	killed := time.Now()
	next := r.g.WaitNewMaster(old, 15*time.Second)
	t.Logf("failover after SIGKILL took %s", time.Since(killed))
	// The new primary lacks the last writes, as a replica whose link lagged
	// would: the lease and the token counter are gone.
	k := keys{prefix: r.prefix}
	if err := r.data(next).Del(ctx, k.lease("p"), k.token("p"), k.done("p")).Err(); err != nil {
		t.Fatal(err)
	}

	// Leases resume: b gets the pipeline, with a token above a's although
	// the counter is gone (the clock term of max(last+1, now_µs)).
	second := acquireEventually(t, b, "p", 10*time.Second)
	if second.FencingToken <= first.FencingToken {
		t.Fatalf("token %d after the failover not above %d", second.FencingToken, first.FencingToken)
	}
	// a learns at its next renewal that its lease went with the old
	// primary, and its run is cancelled.
	waitLost(t, lostAt, 2*sentinelTTL/3+time.Second, "a's lease, gone with the old primary, not given up")
	if runCtx.Err() == nil {
		t.Fatal("a's run not cancelled")
	}
	if ok, err := b.ValidateLease(ctx, "p", first.FencingToken); ok || err != nil {
		t.Fatalf("ValidateLease(stale token) = %v, %v; want false", ok, err)
	}
	if ok, err := a.ValidateLease(ctx, "p", second.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease(b's token) = %v, %v", ok, err)
	}
	// Until a learned it, both may have written: the store takes b's write
	// and refuses a's from then on.
	if !store.write(second.FencingToken) {
		t.Fatal("b's write refused")
	}
	if store.write(first.FencingToken) {
		t.Fatal("the store accepted a write with the stale token")
	}
	if want := []int64{first.FencingToken, second.FencingToken}; !slices.Equal(store.writes, want) {
		t.Fatalf("store writes %v, want %v", store.writes, want)
	}
	r.checkNoPassword(a, b)
}
