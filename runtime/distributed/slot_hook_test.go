package distributed

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

// slotChecker is a go-redis hook that fails the test when a script call or
// a multi-key command names keys of more than one Redis Cluster slot: on a
// Cluster such a call is refused with CROSSSLOT. It runs on a single server,
// so every script the coordinator sends is checked in a fast test, whatever
// the scripts become.
type slotChecker struct {
	fail    func(format string, args ...any) // t.Errorf
	mu      sync.Mutex
	scripts int // script calls checked
}

func (h *slotChecker) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *slotChecker) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.check(cmd)
		return next(ctx, cmd)
	}
}

func (h *slotChecker) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			h.check(cmd)
		}
		return next(ctx, cmds)
	}
}

// multiKey lists commands whose arguments from index 1 on are all keys.
var multiKey = map[string]bool{"del": true, "unlink": true, "exists": true, "mget": true, "touch": true}

func (h *slotChecker) check(cmd redis.Cmder) {
	args := cmd.Args()
	name := strings.ToLower(cmd.Name())
	var keys []string
	switch {
	case name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" || name == "fcall":
		if len(args) < 3 {
			return
		}
		n, err := strconv.Atoi(fmt.Sprint(args[2]))
		if err != nil || len(args) < 3+n {
			h.fail("malformed %s: %v", name, args)
			return
		}
		for _, k := range args[3 : 3+n] {
			keys = append(keys, fmt.Sprint(k))
		}
		h.mu.Lock()
		h.scripts++
		h.mu.Unlock()
	case multiKey[name]:
		for _, k := range args[1:] {
			keys = append(keys, fmt.Sprint(k))
		}
	}
	// The server-wide state epoch and server keys are passed only on one
	// server, never through a ClusterClient (epoch.go): the check is for
	// what a Cluster would see.
	keys = slices.DeleteFunc(keys, func(k string) bool {
		return k == DefaultKeyPrefix+"epoch" || k == DefaultKeyPrefix+"server"
	})
	for _, k := range keys[min(1, len(keys)):] {
		if clusterSlot(k) != clusterSlot(keys[0]) {
			h.fail("%s names keys of two Cluster slots: %q and %q", name, keys[0], k)
		}
	}
}

func (h *slotChecker) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.scripts
}

func TestEveryScriptCallKeepsToOneClusterSlot(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	a := u.coordinator(opts)
	b := u.coordinator(opts)
	hook := &slotChecker{fail: t.Errorf}
	a.client.AddHook(hook)
	b.client.AddHook(hook)
	for _, c := range []struct {
		c  *RedisWorkerCoordinator
		id string
	}{{a, "worker-a"}, {b, "worker-b"}} {
		if err := c.c.Start(ctx, c.id, []string{"orders", "events", "once"}); err != nil {
			t.Fatal(err)
		}
	}
	first := mustAcquire(t, a, "orders", 100)
	mustAcquire(t, a, "events", runtime.RunNumberAuto)
	mustAcquire(t, a, "once", runtime.RunNumberOnce)
	for _, id := range []string{"orders", "events", "once"} {
		if ok, err := b.TryAcquireLease(ctx, id, slotRun(100)); ok || err != nil {
			t.Fatalf("%s: %v, %v", id, ok, err)
		}
	}
	u.stepToNextTimer(2 * timersPerCoordinator) // a renewal round and heartbeats
	if err := a.RenewLease(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.ValidateLease(ctx, "orders", first.FencingToken); !ok || err != nil {
		t.Fatalf("ValidateLease = %v, %v", ok, err)
	}
	for _, id := range []string{"orders", "once"} {
		if err := a.CompleteLease(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.ReleaseLease(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ListWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, b, "events", runtime.RunNumberAuto)
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if hook.count() < 10 {
		t.Fatalf("only %d script calls checked; the test proves little", hook.count())
	}
}

func TestSlotCheckerCatchesACrossSlotScript(t *testing.T) {
	var got []string
	h := &slotChecker{fail: func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) }}
	k := keys{prefix: DefaultKeyPrefix}
	h.check(redis.NewCmd(ctx, "evalsha", "abc", 2, k.lease("p"), k.worker("w"), "arg"))
	h.check(redis.NewCmd(ctx, "evalsha", "abc", 2, k.lease("p"), k.token("p"), "arg"))
	h.check(redis.NewCmd(ctx, "del", k.lease("p"), k.lease("q")))
	if len(got) != 2 || !strings.Contains(got[0], "two Cluster slots") {
		t.Fatalf("reported %q; want the worker key beside a lease key and the DEL of two pipelines", got)
	}
}
