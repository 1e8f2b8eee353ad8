package distributed

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
)

// Eviction and OOM: a lease key that Redis drops while its holder runs does
// not hand the running slot to another worker, and an acquire that Redis
// refuses for memory writes nothing.

// Rule: under maxmemory with noeviction, an acquire that Redis refuses for
// memory is an error and leaves no partial write: the token and lease keys
// are as they were. Once memory is freed, acquiring works again.
func TestEvictionNoevictionOOMRefusesAnAcquireWithoutPartialWrites(t *testing.T) {
	r := newReal(t, redistest.WithArgs("--maxmemory-policy", "noeviction"))
	a := r.started(r.options(stateLossTTL), "a")
	rc := r.client(0)
	k := keysFor(a.s)
	// A first run leaves a token and a completed slot to compare against.
	slot := thisSlot() - 1 // the next one has begun too
	mustAcquire(t, a, "p", slot)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	setMaxmemoryAboveUse(t, rc, 1<<20)
	fillUntilOOM(t, rc)
	before := snapshot(t, rc, k.lease("p"), k.token("p"), k.done("p"))
	ok, err := a.TryAcquireLease(ctx, "p", slotRun(slot+1))
	if ok || err == nil {
		t.Fatalf("acquire at OOM = %v, %v; want false and an error", ok, err)
	}
	t.Logf("acquire at OOM: %v", err)
	if !errors.Is(err, ErrRedisRefusing) || !strings.Contains(err.Error(), "OOM command not allowed") {
		t.Errorf("acquire at OOM: %v; want ErrRedisRefusing with the server's reason", err)
	}
	if logs := r.logs.String(); strings.Contains(logs, "Redis unreachable") || !strings.Contains(logs, `distributed: Redis refused the acquire lease of \"p\"`) {
		t.Errorf("the refused acquire is not logged as refused:\n%s", logs)
	}
	if st := a.Status().(CoordinatorStatus); st.Refused != 1 || !st.Reachable || !strings.HasPrefix(st.RefusedReason, "OOM") {
		t.Errorf("status after the refused acquire: refused %d, reachable %v, reason %q", st.Refused, st.Reachable, st.RefusedReason)
	}
	if after := snapshot(t, rc, k.lease("p"), k.token("p"), k.done("p")); after != before {
		t.Fatalf("the refused acquire wrote: before %s, after %s", before, after)
	}
	if _, held := a.CurrentLease("p"); held {
		t.Fatal("a refused acquire left a current lease")
	}

	deleteFill(t, rc)
	mustAcquire(t, a, "p", slot+1)
}

// setMaxmemoryAboveUse sets maxmemory headroom bytes above what the server
// uses now.
func setMaxmemoryAboveUse(t *testing.T, rc *redis.Client, headroom int64) {
	t.Helper()
	used, err := rc.InfoMap(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if _, err := fmt.Sscan(used["Memory"]["used_memory"], &n); err != nil {
		t.Fatalf("used_memory: %v", err)
	}
	if err := rc.ConfigSet(ctx, "maxmemory", fmt.Sprint(n+headroom)).Err(); err != nil {
		t.Fatal(err)
	}
}

// snapshot renders keys' values and whether they exist, for comparison.
func snapshot(t *testing.T, rc *redis.Client, keys ...string) string {
	t.Helper()
	var b strings.Builder
	for _, key := range keys {
		v, err := rc.Dump(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			v = "<none>"
		} else if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s=%q ", key, v)
	}
	return b.String()
}
