package distributed

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

func TestIntegrationRaceHasOneHolderAtAnyInstant(t *testing.T) {
	r := newReal(t)
	coords := []*RedisWorkerCoordinator{
		r.started(r.options(10*time.Second), "a"),
		r.started(r.options(10*time.Second), "b"),
	}
	byWorker := raceForOneLease(t, coords, 50)
	if len(byWorker) != 2 {
		t.Errorf("acquisitions by worker %v; want both coordinators to win some", byWorker)
	}
}

func TestIntegration1000CyclesStrictlyIncreasingTokens(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(10*time.Second), "a")
	var last int64
	for i := 0; i < 1000; i++ {
		lease := mustAcquire(t, c, "p", runtime.RunNumberAuto)
		if lease.FencingToken <= last {
			t.Fatalf("cycle %d: token %d not above %d", i, lease.FencingToken, last)
		}
		last = lease.FencingToken
		if err := c.ReleaseLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIntegrationTokensIncreaseAfterRestartWithoutPersistence(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(10*time.Second), "a")
	var highest int64
	for i := 0; i < 20; i++ {
		lease := mustAcquire(t, c, "p", int64(1000+i))
		highest = max(highest, lease.FencingToken)
		if err := c.CompleteLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	r.srv.Restart()
	if n, _ := r.client(0).Exists(ctx, "agora:distributed:token:{p}", "agora:distributed:completed:{p}").Result(); n != 0 {
		t.Fatal("counter survived the restart; the test needs it gone")
	}
	var lease runtime.Lease
	var slot int64
	waitUntil(t, 5*time.Second, "an acquire after the restart", func() bool {
		// The slot running now, once one begins after the new epoch.
		slot = thisSlot()
		ok, _ := c.TryAcquireLease(ctx, "p", slotRun(slot))
		if ok {
			lease, _ = c.CurrentLease("p")
		}
		return ok
	})
	if lease.FencingToken <= highest {
		t.Fatalf("token after restart %d not above %d issued before", lease.FencingToken, highest)
	}
	// The completed slots' marks went with the data: the epoch refuses
	// them instead.
	if err := c.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.TryAcquireLease(ctx, "p", slotRun(1019)); ok || !errors.Is(err, ErrStateLost) || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("a slot completed before the restart: %v, %v; want ErrStateLost", ok, err)
	}
}

func TestIntegrationSlotCompletedAcrossWorkers(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	b := r.started(r.options(10*time.Second), "b")
	slot := time.Now().Truncate(time.Minute).Unix() - 60
	mustAcquire(t, a, "p", slot)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(slot)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("lagging replica: %v, %v; want ErrSlotCompleted", ok, err)
	}
	mustAcquire(t, b, "p", slot+60)
}

func TestIntegrationTwoPrefixesOnOneServer(t *testing.T) {
	r := newReal(t)
	oa, ob := r.options(10*time.Second), r.options(10*time.Second)
	oa.KeyPrefix, ob.KeyPrefix = "team-a:", "team-b:"
	a := r.started(oa, "a")
	b := r.started(ob, "b")
	slot := liveSlot() // the prefixes were not seeded
	mustAcquire(t, a, "p", slot)
	mustAcquire(t, b, "p", slot)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, b, "p", slot) // completed only under the other prefix
	wa, _ := a.ListWorkers(ctx)
	wb, _ := b.ListWorkers(ctx)
	if len(wa) != 1 || wa[0].ID != "a" || len(wb) != 1 || wb[0].ID != "b" {
		t.Fatalf("workers: %v / %v", wa, wb)
	}
}

func TestIntegrationURLForms(t *testing.T) {
	t.Run("password", func(t *testing.T) {
		r := newReal(t, redistest.WithPassword("s3cr3t-pw"))
		c := r.started(r.options(5*time.Second), "a")
		mustAcquire(t, c, "p", liveSlot())
		opts := r.options(5 * time.Second)
		opts.RedisURL = strings.Replace(r.srv.URL(), "s3cr3t-pw", "not-it-at-all", 1)
		bad, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer bad.Close()
		// A wrong password is a configuration error: Start refuses it.
		err = bad.Start(ctx, "bad", []string{"p"})
		if !errors.Is(err, ErrRedisRefused) || strings.Contains(err.Error(), "not-it-at-all") || strings.Contains(r.logs.String(), "not-it-at-all") {
			t.Fatalf("wrong password: err=%v (must fail, without showing it)", err)
		}
	})
	t.Run("ACL user", func(t *testing.T) {
		r := newReal(t, redistest.WithArgs("--user", "default", "off", "--user", "agora", "on", ">agora-pw", "~*", "&*", "+@all"))
		opts := r.options(5 * time.Second)
		opts.RedisURL = fmt.Sprintf("redis://agora:agora-pw@%s/0", r.srv.Addr())
		c := r.started(opts, "a")
		mustAcquire(t, c, "p", liveSlot())
		if ws, err := c.ListWorkers(ctx); err != nil || len(ws) != 1 {
			t.Fatalf("ListWorkers as ACL user: %v, %v", ws, err)
		}
	})
	t.Run("database", func(t *testing.T) {
		r := newReal(t)
		opts := r.options(5 * time.Second)
		opts.RedisURL = r.srv.URLForDB(5)
		c := r.started(opts, "a")
		mustAcquire(t, c, "p", liveSlot())
		if n, _ := r.client(5).Exists(ctx, "agora:distributed:lease:{p}").Result(); n != 1 {
			t.Error("lease not in database 5")
		}
		if n, _ := r.client(0).Exists(ctx, "agora:distributed:lease:{p}").Result(); n != 0 {
			t.Error("lease written to database 0")
		}
	})
	t.Run("unix socket", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "r.sock")
		r := newReal(t, redistest.WithArgs("--unixsocket", sock, "--unixsocketperm", "700"))
		opts := r.options(5 * time.Second)
		opts.RedisURL = "unix://" + sock + "?db=2"
		c := r.started(opts, "a")
		mustAcquire(t, c, "p", liveSlot())
		if n, _ := r.client(2).Exists(ctx, "agora:distributed:lease:{p}").Result(); n != 1 {
			t.Error("lease not in database 2 over the socket")
		}
	})
	t.Run("TLS", func(t *testing.T) {
		r := newReal(t, redistest.WithTLS())
		opts := r.options(5 * time.Second)
		// The certificate is self-signed: without skip_verify the client
		// refuses it, which shows TLS is really in use.
		strict := r.started(opts, "strict")
		if _, err := strict.TryAcquireLease(ctx, "p", slotRun(1)); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("unverifiable certificate accepted: %v", err)
		}
		opts.RedisURL = r.srv.URL() + "?skip_verify=true"
		c := r.started(opts, "a")
		mustAcquire(t, c, "p", liveSlot())
	})
}

func TestIntegrationFailSafeAndReconnect(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(3*time.Second), "a")
	mustAcquire(t, c, "warm", 1)
	r.srv.Kill()

	start := time.Now()
	ok, err := c.TryAcquireLease(ctx, "p", slotRun(1))
	if ok || err == nil {
		t.Fatalf("Redis down: %v, %v; want false and the cause", ok, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refusal took %s; a dead server should fail fast", took)
	}
	if err := c.Healthy(ctx); err == nil {
		t.Fatal("Healthy with Redis down")
	}
	r.srv.Restart()
	// The restarted server's epoch begins when a worker first reaches it,
	// which may be after a slot taken now: each try asks for a slot that
	// begins after the call, as the scheduler would.
	waitUntil(t, 5*time.Second, "reconnection", func() bool {
		ok, _ := c.TryAcquireLease(ctx, "p", slotRun(liveSlot()))
		return ok
	})
	if err := c.Healthy(ctx); err != nil {
		t.Fatalf("Healthy after reconnecting: %v", err)
	}
	// The worker record is back after the next heartbeat (1 s here).
	waitUntil(t, 3*time.Second, "the worker record to reappear", func() bool {
		ws, _ := c.ListWorkers(ctx)
		return len(ws) == 1
	})
}

func TestIntegrationStopHandsOverAtOnce(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(time.Minute), "a")
	b := r.started(r.options(time.Minute), "b")
	mustAcquire(t, a, "p", 1)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Stop(cctx); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, b, "p", 1) // no waiting out the minute-long TTL
}
