package distributed

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// Each test here names the state-loss rule it checks (epoch.go), on a real
// redis-server.

// startedSlot is the slot of the current second: it has begun, so a
// request for it comes after its start, as in production.
func startedSlot() int64 { return time.Now().Unix() }

func TestEpochFlushBetweenTwoRequestsOfOneSlotRefusesTheSecond(t *testing.T) {
	r := newReal(t) // a new state: epoch 1, every slot may run
	a := r.started(r.options(10*time.Second), "a")
	b := r.started(r.options(10*time.Second), "b")
	done, running := startedSlot()-1, startedSlot()
	mustAcquire(t, a, "p", done)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, a, "q", running) // a still runs it
	if err := r.client(0).FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// b's record went with the data: it writes it again (a new epoch, the
	// Redis time now), and both slots began before that.
	for _, req := range []struct {
		id   string
		slot int64
	}{{"p", done}, {"q", running}} {
		ok, err := b.TryAcquireLease(ctx, req.id, slotRun(req.slot))
		if ok || !errors.Is(err, ErrStateLost) || !errors.Is(err, runtime.ErrSlotCompleted) {
			t.Fatalf("%s slot %d after FLUSHALL: %v, %v; want ErrStateLost", req.id, req.slot, ok, err)
		}
	}
	if n := b.Status().(CoordinatorStatus).StateLost; n != 2 {
		t.Errorf("StateLost = %d, want 2", n)
	}
	if n := r.logs.count("slot skipped: the coordination state was lost"); n != 2 {
		t.Errorf("%d skip lines, want one per pipeline:\n%s", n, r.logs)
	}
	// Later slots run as usual.
	mustAcquire(t, b, "p", liveSlot())
}

func TestEpochGrantRequiresTheRequestersOwnRecord(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	admin := r.client(0)
	// The record was written a moment ago, so the grant would not refresh
	// it; it is gone all the same (a restart, FLUSHDB).
	if err := admin.Del(ctx, a.recordKey).Err(); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, a, "p", liveSlot())
	if n, _ := admin.Exists(ctx, a.recordKey).Result(); n != 1 {
		t.Fatal("a lease was granted while its holder's record is missing: a contender would take it over")
	}
	if e, _ := admin.HGet(ctx, a.recordKey, "epoch").Result(); e == "" {
		t.Fatal("the record carries no epoch")
	}
}

func TestEpochNoTakeoverOfALeaseGrantedBeforeTheStateWentBack(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	b := r.started(r.options(10*time.Second), "b")
	admin := r.client(0)
	held := mustAcquire(t, a, "p", startedSlot()-1)
	released := startedSlot()
	mustAcquire(t, a, "q", released)
	if err := a.ReleaseLease(ctx, "q"); err != nil { // a failed run: the slot is retried
		t.Fatal(err)
	}

	// What a restart from an AOF file that missed the last second looks
	// like: a new server (run_id) under keys that came back, and a's record
	// lost with the missing writes while a runs.
	if err := admin.Set(ctx, DefaultKeyPrefix+"server", "a-server-before-the-restart", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Del(ctx, a.recordKey).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}

	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(held.RunNumber+10)); ok || err != nil {
		t.Fatalf("b took over a lease granted before the epoch: %v, %v", ok, err)
	}
	if ok, err := b.TryAcquireLease(ctx, "q", slotRun(released)); ok || !errors.Is(err, ErrStateLost) {
		t.Fatalf("a slot granted before the epoch: %v, %v; want ErrStateLost", ok, err)
	}
	if !strings.Contains(r.logs.String(), "the coordination state was lost or went back in time") {
		t.Errorf("no line says the state went back:\n%s", r.logs)
	}
	if st := b.Status().(CoordinatorStatus); st.EpochMoves == 0 {
		t.Error("EpochMoves = 0")
	}
	// a's own lease is still a's, and renews.
	if err := a.RenewLease(ctx, "p"); err != nil {
		t.Fatalf("the holder lost its lease: %v", err)
	}
}

func TestEpochARedisThatEvictsIsRefused(t *testing.T) {
	r := newReal(t, redistest.WithArgs("--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"))
	c, err := NewRedisWorkerCoordinator(r.options(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Start(ctx, "a", []string{"p"})
	if !errors.Is(err, ErrEvictingRedis) || !errors.Is(err, ErrRedisRefused) || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Fatalf("Start on an evicting Redis: %v; want ErrEvictingRedis naming the policy", err)
	}
}

func TestEpochOutOfMemoryGrantsNothingAndKeepsAnUnrecordedLease(t *testing.T) {
	r := newReal(t, redistest.WithArgs("--maxmemory-policy", "noeviction"))
	a := r.started(r.options(10*time.Second), "a")
	admin := r.client(0)
	oom := func(on bool) {
		t.Helper()
		limit := "0"
		if on {
			limit = "1" // below what the server already uses
		}
		if err := admin.ConfigSet(ctx, "maxmemory", limit).Err(); err != nil {
			t.Fatal(err)
		}
	}
	lease := mustAcquire(t, a, "held", liveSlot())
	oom(true)
	slot := liveSlot()
	ok, err := a.TryAcquireLease(ctx, "p", slotRun(slot))
	if ok || err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("acquire under OOM: %v, %v; want refused with the OOM error", ok, err)
	}
	for _, k := range []string{"lease:{p}", "token:{p}"} {
		if n, _ := admin.Exists(ctx, DefaultKeyPrefix+k).Result(); n != 0 {
			t.Errorf("%s written by a refused grant", k)
		}
	}
	// Completing under OOM: the slot cannot be recorded, so the lease stays
	// held (a contender must not find it free and the slot not done).
	if err := a.CompleteLease(ctx, "held"); err == nil {
		t.Fatal("completion under OOM reported success")
	}
	if v, err := admin.LIndex(ctx, DefaultKeyPrefix+"lease:{held}", 0).Result(); err != nil || !strings.HasPrefix(v, epochToken(lease)) {
		t.Fatalf("lease after a refused completion: %q, %v; want still held", v, err)
	}
	oom(false)
	waitUntil(t, 5*time.Second, "the completion to be recorded", func() bool {
		score, err := admin.ZScore(ctx, DefaultKeyPrefix+"completed:{held}", "slot").Result()
		return err == nil && int64(score) == lease.RunNumber
	})
	mustAcquire(t, a, "p", slot)
}

func epochToken(l runtime.Lease) string { return strconv.FormatInt(l.FencingToken, 10) + " " }

func TestEpochRestartFromASnapshotMissingTheLastWritesRefusesTheirSlots(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(10*time.Second), "a")
	b := r.started(r.options(10*time.Second), "b")
	saved, lost := startedSlot()-1, startedSlot()
	mustAcquire(t, a, "p", saved)
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if err := r.client(0).Save(ctx).Err(); err != nil { // the file on disk
		t.Fatal(err)
	}
	mustAcquire(t, a, "p", lost) // granted and completed after the file
	if err := a.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	r.srv.RestartFromFiles()
	if n, _ := r.client(0).Exists(ctx, DefaultKeyPrefix+"epoch").Result(); n != 1 {
		t.Fatal("the snapshot holds no epoch; the test needs state that came back")
	}
	waitUntil(t, 5*time.Second, "b to reach the restarted server", func() bool {
		_, err := b.TryAcquireLease(ctx, "p", slotRun(lost))
		return err == nil || errors.Is(err, runtime.ErrSlotCompleted)
	})
	ok, err := b.TryAcquireLease(ctx, "p", slotRun(lost))
	if ok || !errors.Is(err, ErrStateLost) {
		t.Fatalf("slot completed after the snapshot: %v, %v; want ErrStateLost", ok, err)
	}
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(saved)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("slot completed before the snapshot: %v, %v; want refused", ok, err)
	}
}
