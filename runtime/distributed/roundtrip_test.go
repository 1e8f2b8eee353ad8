package distributed

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// tripCounter is a go-redis hook counting network round trips: one per
// command sent alone, one per pipeline.
type tripCounter struct {
	trips atomic.Int64
	cmds  atomic.Int64
}

func (h *tripCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.trips.Add(1)
		h.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (h *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.trips.Add(1)
		h.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// measure returns the round trips and commands f caused.
func (h *tripCounter) measure(f func()) (trips, cmds int64) {
	t0, c0 := h.trips.Load(), h.cmds.Load()
	f()
	return h.trips.Load() - t0, h.cmds.Load() - c0
}

func TestRoundTripsPerOperation(t *testing.T) {
	r := newReal(t)
	opts := r.options(time.Minute) // no background renewal during the test
	c := r.started(opts, "a")
	// Steady state: the first grant may find the worker record not yet
	// written under the server's epoch (the heartbeat loop writes it as
	// Start returns) and write it before asking again; a warm-up grant on
	// another pipeline settles that and loads the scripts.
	mustAcquire(t, c, "warm", runtime.RunNumberAuto)
	if err := c.ReleaseLease(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	hook := &tripCounter{}
	c.client.AddHook(hook)

	check := func(what string, wantTrips, wantCmds int64, f func()) {
		t.Helper()
		trips, cmds := hook.measure(f)
		if trips != wantTrips || cmds != wantCmds {
			t.Errorf("%s: %d round trips (%d commands), want %d (%d)", what, trips, cmds, wantTrips, wantCmds)
		}
	}
	check("acquire", 1, 1, func() { mustAcquire(t, c, "p", 1) })
	lease, _ := c.CurrentLease("p")
	check("validate", 1, 1, func() {
		if ok, err := c.ValidateLease(ctx, "p", lease.FencingToken); !ok || err != nil {
			t.Fatalf("ValidateLease = %v, %v", ok, err)
		}
	})
	// A renewal round refreshes the worker record first, in the same
	// pipeline (takeover.go).
	check("renew one", 1, 2, func() {
		if err := c.RenewLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	})
	check("release", 1, 1, func() {
		if err := c.ReleaseLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	})
	// What the winning path costs the server, its script's own calls
	// included (INFO commandstats): acquire is the script and its LINDEX,
	// ZSCORE, HGET (the worker record's epoch), TIME, SET … GET, RPUSH and
	// PEXPIRE; completion two plain
	// commands, ZADD … GT and LREM.
	admin := r.client(0)
	serverCalls := func(what string, want int64, f func()) {
		t.Helper()
		before := commandCalls(t, admin)
		f()
		if got := commandCalls(t, admin) - before; got != want {
			t.Errorf("%s: the server ran %d commands, want %d", what, got, want)
		}
	}
	serverCalls("acquire slot", 8, func() {
		check("acquire slot", 1, 1, func() { mustAcquire(t, c, "p", 100) })
	})
	// Completion records the slot, then releases the lease once the
	// record went through (queueRecord): two round trips, two commands.
	serverCalls("complete", 2, func() {
		check("complete", 2, 2, func() {
			if err := c.CompleteLease(ctx, "p"); err != nil {
				t.Fatal(err)
			}
		})
	})
	check("refused (slot completed)", 1, 1, func() {
		if ok, _ := c.TryAcquireLease(ctx, "p", slotRun(100)); ok {
			t.Fatal("completed slot acquired")
		}
	})

	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		mustAcquire(t, c, p, runtime.RunNumberAuto)
	}
	check("renewal of all 8 held leases", 1, 9, func() {
		if ok, _ := c.renewAll(); !ok {
			t.Fatal("renewal round failed")
		}
	})
	check("refused while held locally", 0, 0, func() {
		if ok, _ := c.TryAcquireLease(ctx, "a", runtime.RunNumberAuto); ok {
			t.Fatal("acquired a held lease")
		}
	})
	if err := c.heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	// The server's own count: no steady-state call (scripts loaded at
	// Connect) may have been answered NOSCRIPT and resent with EVAL.
	if n := noScriptReplies(t, admin); n != 0 {
		t.Errorf("the server answered NOSCRIPT %d times in steady state; want 0", n)
	}
	for _, s := range []*redis.Script{leasebackend.AcquireScript, leasebackend.RenewScript, leasebackend.HeartbeatScript} {
		if got, want := s.Hash(), sha1Hex(leasebackend.Source(s)); got != want {
			t.Errorf("script hash %q after Connect, want its SHA1 %q", got, want)
		}
	}

	// After the server forgets its scripts (restart, SCRIPT FLUSH) the first
	// call of each falls back to EVAL once.
	if err := r.client(0).ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	check("renewal after SCRIPT FLUSH", 2, 18, func() {
		if ok, _ := c.renewAll(); !ok {
			t.Fatal("renewal round failed")
		}
	})
	afterFlush := noScriptReplies(t, admin)
	if afterFlush != 9 {
		t.Errorf("%d NOSCRIPT replies after SCRIPT FLUSH, want the record refresh and the 8 renewals", afterFlush)
	}
	check("renewal once reloaded", 1, 9, func() {
		if ok, _ := c.renewAll(); !ok {
			t.Fatal("renewal round failed")
		}
	})
	if n := noScriptReplies(t, admin) - afterFlush; n != 0 {
		t.Errorf("%d NOSCRIPT replies once the scripts were reloaded, want 0", n)
	}
}

// noScriptReplies returns how many NOSCRIPT errors the server has replied
// since it started, from INFO errorstats.
func noScriptReplies(t *testing.T, admin *redis.Client) int64 {
	t.Helper()
	info, err := admin.Info(ctx, "errorstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	return redistest.ParseErrorStats(info)["NOSCRIPT"]
}

// commandCalls returns how many commands the server has run since it
// started, the INFO calls that read the count left out.
func commandCalls(t *testing.T, admin *redis.Client) int64 {
	t.Helper()
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for name, st := range redistest.ParseCommandStats(info) {
		if name != "info" {
			n += st.Calls
		}
	}
	return n
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
