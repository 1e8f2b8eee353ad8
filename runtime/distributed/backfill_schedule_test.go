package distributed

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// TestBackfillAndScheduleNeverRunOneSlotTwice: the schedule asks again for
// a slot after its time when it retries a failed run, runs late or catches
// up. A slot a backfill holds, or completed above the completed slot, is
// refused to it as completed; and a backfill does not hand out a slot the
// schedule's lease names, but waits for that run to end. Each order of the
// two would otherwise run the slot twice.
func TestBackfillAndScheduleNeverRunOneSlotTwice(t *testing.T) {
	r := newReal(t)
	cs, in := backfillFleet(t, r, 5*time.Second, "a", "b")
	bf, sched := cs[0], cs[1]
	now := time.Now().Truncate(time.Minute)
	s1, s2, s3 := now.Add(-3*time.Minute), now.Add(-2*time.Minute), now.Add(-time.Minute)

	// s1: a backfill of one slot completes it; the schedule's retry of s1
	// comes after.
	if _, err := in.TriggerSlot(context.Background(), BackfillRequest{PipelineID: "p"}, s1); err != nil {
		t.Fatal(err)
	}
	cl, turn, err := bf.claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if err != nil || turn != backfillClaimed || !cl.Slot.Equal(s1) {
		t.Fatalf("claim s1: %+v %v %v", cl, turn, err)
	}
	// While the backfill holds it, the schedule is refused it. Asked ahead
	// (lease-ahead, by a worker whose clock is behind), the request comes
	// without the backfill hash and decides nothing.
	// (Of two workers, only the one preferred for the slot asks Redis.)
	askAgain := 0
	for _, c := range cs {
		r := c.TryAcquireLeases(context.Background(), []runtime.LeaseRequest{{PipelineID: "p", RunNumber: slotRun(s1.Unix()), Ahead: true}})[0]
		if r.Acquired {
			t.Fatalf("%s asked for s1 ahead while a backfill runs it, and got it", c.workerID)
		}
		if errors.Is(r.Err, runtime.ErrAskAtSlot) {
			askAgain++
		}
	}
	if askAgain == 0 {
		t.Fatal("no ahead request for s1 was told to ask again at the slot")
	}
	if ok, err := sched.TryAcquireLease(context.Background(), "p", slotRun(s1.Unix())); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("the schedule asked for s1 while a backfill runs it: %v, %v; want ErrSlotCompleted", ok, err)
	}
	rec := &history.Record{Outcome: history.OutcomeSucceeded, Start: time.Now(), End: time.Now()}
	if ok, err := bf.finishBackfillSlot(context.Background(), cl, backfillSlotDone, rec, 0); !ok || err != nil {
		t.Fatalf("finish s1: %v %v", ok, err)
	}
	if ok, err := sched.TryAcquireLease(context.Background(), "p", slotRun(s1.Unix())); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("the schedule asked for s1 after its backfill completed it: %v, %v; want ErrSlotCompleted", ok, err)
	}
	ended(t, bf)

	// s2: the schedule runs it first (a retry, say); a backfill of s2 waits
	// for that run, then finds the slot completed.
	mustAcquire(t, sched, "p", s2.Unix())
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: s2, To: s3.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if _, turn, err := bf.claimBackfillSlot(context.Background(), "p", backfillSchedule); err != nil || turn != backfillBusy {
		t.Fatalf("claim of s2 while the schedule runs it: %v %v; want busy", turn, err)
	}
	if err := sched.CompleteLease(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	cl, turn, err = bf.claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if err != nil || turn != backfillClaimed || !cl.Slot.Equal(s2) {
		t.Fatalf("claim after the scheduled run ended: %+v %v %v", cl, turn, err)
	}
	if done, err := bf.SlotCompleted(context.Background(), "p", s2.Unix()); !done || err != nil {
		t.Fatalf("SlotCompleted(s2) = %v, %v after the scheduled run completed it", done, err)
	}
	if ok, err := bf.finishBackfillSlot(context.Background(), cl, backfillSlotSkipped, nil, 0); !ok || err != nil {
		t.Fatalf("finish s2 skipped: %v %v", ok, err)
	}

	// s3: completed by the backfill above the completed slot (s2 now); a
	// later backfill keeps that mark, and a failed backfill slot is left
	// to the schedule.
	cl, _, _ = bf.claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if !cl.Slot.Equal(s3) {
		t.Fatalf("claim s3: %+v", cl)
	}
	if ok, err := bf.finishBackfillSlot(context.Background(), cl, backfillSlotDone, rec, 0); !ok || err != nil {
		t.Fatalf("finish s3: %v %v", ok, err)
	}
	ended(t, bf)
	if _, err := in.TriggerSlot(context.Background(), BackfillRequest{PipelineID: "p", Reprocess: true}, s1); err != nil {
		t.Fatal(err)
	}
	if ok, err := sched.TryAcquireLease(context.Background(), "p", slotRun(s3.Unix())); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("the schedule asked for s3 after the next backfill started: %v, %v; want ErrSlotCompleted", ok, err)
	}
	cl, _, _ = bf.claimBackfillSlot(context.Background(), "p", backfillSchedule)
	failed := &history.Record{Outcome: history.OutcomeFailed, Error: "no", Start: time.Now(), End: time.Now()}
	if ok, err := bf.finishBackfillSlot(context.Background(), cl, backfillSlotFailed, failed, 0); !ok || err != nil {
		t.Fatalf("finish s1 failed: %v %v", ok, err)
	}
	// s1 completed before (by the first backfill) and is below the
	// completed slot: refused either way. A slot the backfill never
	// completed is the schedule's.
	mustAcquire(t, sched, "p", now.Unix())
}

// ended claims once more, and wants the backfill to end.
func ended(t *testing.T, c *RedisWorkerCoordinator) {
	t.Helper()
	if _, turn, err := c.claimBackfillSlot(context.Background(), "p", backfillSchedule); err != nil || turn != backfillEnded {
		t.Fatalf("claim after the last slot: %v %v; want the end", turn, err)
	}
}

// TestForeignBackfillHashRefusesTheSlotNamingIt: a backfill hash that is
// not agora's (another type), read because the completed key says a
// backfill may hold slots, refuses the slot without writing anything and
// names the key; once it is deleted the slot is granted.
func TestForeignBackfillHashRefusesTheSlotNamingIt(t *testing.T) {
	r := newReal(t)
	c := startCoordinator(t, r.options(time.Minute), "w1", []string{"p"})
	admin := r.client(0)
	if err := admin.ZAdd(ctx, c.keys.done("p"), redis.Z{Score: 1 << 52, Member: "backfill"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, c.keys.backfill("p"), "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	slot := startedSlot() - 1
	ok, err := c.TryAcquireLease(ctx, "p", slotRun(slot))
	if ok || !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), c.keys.backfill("p")) {
		t.Fatalf("TryAcquireLease = %v, %v; want ErrForeignData naming %s", ok, err, c.keys.backfill("p"))
	}
	if n, _ := admin.Exists(ctx, c.keys.lease("p")).Result(); n != 0 {
		t.Fatal("a lease was written")
	}
	admin.Del(ctx, c.keys.backfill("p"))
	mustAcquire(t, c, "p", slot)
}

// TestAnExpiredBackfillSlotIsNotHeldAgainstTheSchedule: a slot whose
// backfill holder stopped renewing (killed) is not the backfill's once its
// lease expired. While the schedule's lease names it, the backfill does
// not hand it out again; and a cancelled backfill, which never hands it out
// again, leaves it to the schedule.
func TestAnExpiredBackfillSlotIsNotHeldAgainstTheSchedule(t *testing.T) {
	r := newReal(t)
	cs, in := backfillFleet(t, r, 300*time.Millisecond, "a", "b")
	bf, sched := cs[0], cs[1]
	slot := time.Now().Truncate(time.Minute).Add(-time.Minute)
	if _, err := in.TriggerSlot(context.Background(), BackfillRequest{PipelineID: "p"}, slot); err != nil {
		t.Fatal(err)
	}
	if _, turn, err := bf.claimBackfillSlot(context.Background(), "p", backfillSchedule); err != nil || turn != backfillClaimed {
		t.Fatalf("claim: %v %v", turn, err)
	}
	if ok, err := sched.TryAcquireLease(context.Background(), "p", slotRun(slot.Unix())); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("the schedule asked for the slot while its backfill holder lives: %v, %v", ok, err)
	}
	time.Sleep(400 * time.Millisecond) // the holder was killed: its lease expires
	mustAcquire(t, sched, "p", slot.Unix())
	if _, turn, err := cs[1].claimBackfillSlot(context.Background(), "p", backfillSchedule); err != nil || turn != backfillBusy {
		t.Fatalf("claim of the expired slot while the schedule runs it: %v %v; want busy", turn, err)
	}
	if err := sched.ReleaseLease(context.Background(), "p"); err != nil { // the run failed
		t.Fatal(err)
	}
	if _, err := in.CancelBackfill(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, sched, "p", slot.Unix())
}
