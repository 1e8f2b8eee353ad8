package distributed

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// backfillSchedule is the schedule the backfill tests publish.
var backfillSchedule = runtime.MustCron("* * * * *")

func TestBackfillSlotsAreTheSchedulesRunNumbers(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name     string
		s        runtime.Schedule
		from, to string
		want     []string
	}{
		{"cron, from on a slot", runtime.MustCron("0 * * * *"), "2026-12-01T00:00:00Z", "2026-12-01T03:00:00Z",
			[]string{"2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z", "2026-12-01T02:00:00Z"}},
		{"cron, from between slots, to on a slot (excluded)", runtime.MustCron("0 * * * *"), "2026-12-01T00:30:00Z", "2026-12-01T02:00:00Z",
			[]string{"2026-12-01T01:00:00Z"}},
		{"every: windows from the epoch", runtime.Every(15 * time.Minute), "2026-12-01T00:10:00Z", "2026-12-01T00:46:00Z",
			[]string{"2026-12-01T00:15:00Z", "2026-12-01T00:30:00Z", "2026-12-01T00:45:00Z"}},
		{"every, from on a window", runtime.Every(time.Hour), "2026-12-01T05:00:00Z", "2026-12-01T06:00:00Z",
			[]string{"2026-12-01T05:00:00Z"}},
		{"empty range", runtime.MustCron("0 0 * * *"), "2026-12-01T01:00:00Z", "2026-12-01T02:00:00Z", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := BackfillSlots(c.s, at(c.from), at(c.to), 100)
			if err != nil {
				t.Fatal(err)
			}
			var text []string
			for _, g := range got {
				text = append(text, g.UTC().Format(time.RFC3339))
			}
			if len(text) != len(c.want) {
				t.Fatalf("slots = %v, want %v", text, c.want)
			}
			for i := range text {
				if text[i] != c.want[i] {
					t.Fatalf("slots = %v, want %v", text, c.want)
				}
			}
		})
	}
	for _, s := range []runtime.Schedule{runtime.Continuous(), runtime.Once(), runtime.Every(500 * time.Millisecond), runtime.Every(1500 * time.Millisecond)} {
		if _, err := BackfillSlots(s, at("2026-12-01T00:00:00Z"), at("2026-12-01T01:00:00Z"), 10); !errors.Is(err, ErrInvalidBackfill) {
			t.Errorf("BackfillSlots(%s) = %v, want ErrInvalidBackfill", s, err)
		}
	}
	got, _ := BackfillSlots(runtime.Every(time.Second), at("2026-12-01T00:00:00Z"), at("2026-12-02T00:00:00Z"), 10)
	if len(got) != 11 {
		t.Fatalf("a range over the limit gave %d slots, want limit+1 = 11", len(got))
	}
}

// backfillFleet starts workers running "p" on cron "* * * * *" and an
// inspector, all on the system clock.
func backfillFleet(t *testing.T, r *real, ttl time.Duration, workers ...string) ([]*RedisWorkerCoordinator, *Inspector) {
	t.Helper()
	var cs []*RedisWorkerCoordinator
	for _, id := range workers {
		opts := r.options(ttl)
		c, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		c.SetSchedules(map[string]string{"p": backfillSchedule.String()})
		if err := c.Start(context.Background(), id, []string{"p"}); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	in, err := NewInspector(context.Background(), r.options(ttl))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	return cs, in
}

// TestBackfillHandsEachSlotToOneReplica: three replicas claiming as fast
// as they can, two slots at a time, each slot is handed out once, in
// order, and the backfill ends done with every slot counted.
func TestBackfillHandsEachSlotToOneReplica(t *testing.T) {
	r := newReal(t)
	cs, in := backfillFleet(t, r, 5*time.Second, "a", "b", "c")
	to := time.Now().Truncate(time.Minute)
	from := to.Add(-30 * time.Minute)
	p, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: from, To: to, Parallel: 2, Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 30 || p.State != BackfillRunning || p.Request.Parallel != 2 {
		t.Fatalf("started = %+v", p)
	}
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: from, To: to}); !errors.Is(err, ErrBackfillRunning) {
		t.Fatalf("a second backfill: %v, want ErrBackfillRunning", err)
	}

	var (
		mu      sync.Mutex
		handed  = map[int64]string{}
		tokens  = map[int64]bool{}
		maxBusy int
		busy    int
		wg      sync.WaitGroup
	)
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cl, turn, err := c.claimBackfillSlot(context.Background(), "p", backfillSchedule)
				if err != nil {
					t.Error(err)
					return
				}
				switch turn {
				case backfillEnded:
					return
				case backfillBusy, backfillWaiting:
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				if w, dup := handed[cl.Slot.Unix()]; dup {
					t.Errorf("slot %s handed to %s and again to %s", cl.Slot, w, c.workerID)
				}
				if tokens[cl.Token] {
					t.Errorf("token %d minted twice", cl.Token)
				}
				handed[cl.Slot.Unix()], tokens[cl.Token] = c.workerID, true
				busy++
				maxBusy = max(maxBusy, busy)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				busy--
				mu.Unlock()
				rec := &history.Record{Outcome: history.OutcomeSucceeded, Start: time.Now(), End: time.Now()}
				if ok, err := c.finishBackfillSlot(context.Background(), cl, backfillSlotDone, rec, 0); err != nil || !ok {
					t.Errorf("finish %s: %v %v", cl.Slot, ok, err)
				}
			}
		}()
	}
	wg.Wait()
	if len(handed) != 30 {
		t.Fatalf("%d slots handed out, want 30", len(handed))
	}
	for s := from; s.Before(to); s = s.Add(time.Minute) {
		if _, ok := handed[s.Unix()]; !ok {
			t.Errorf("slot %s never handed out", s)
		}
	}
	if maxBusy > 2 {
		t.Errorf("%d slots ran at once, parallel is 2", maxBusy)
	}
	p, err = in.Backfill(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if p.State != BackfillDone || p.Done != 30 || p.Remaining() != 0 || len(p.InFlight) != 0 || p.Ended.IsZero() {
		t.Fatalf("progress = %+v", p)
	}
	// Each slot is in the run history, under its claim's token, so a
	// downstream (After) and the next backfill know it completed.
	for s := from; s.Before(to); s = s.Add(time.Minute) {
		if ok, err := cs[0].SlotCompleted(context.Background(), "p", s.Unix()); !ok || err != nil {
			t.Fatalf("SlotCompleted(%s) = %v, %v after its backfill", s, ok, err)
		}
	}
	runs, err := in.Runs(context.Background(), RunQuery{PipelineIDs: []string{"p"}, Limit: 100})
	if err != nil || len(runs) != 30 {
		t.Fatalf("run history: %d runs, %v", len(runs), err)
	}
	for _, run := range runs {
		if !tokens[run.FencingToken] || run.RunNumber%60 != 0 || run.RunNumber < from.Unix() {
			t.Fatalf("a backfill run in the history does not carry its claim's token and slot: %+v", run)
		}
	}
	// The first poll after the end takes the backfill off the index.
	if err := cs[0].pollControl(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := r.client(0).HLen(context.Background(), cs[0].keys.backfills()).Result(); n != 0 || len(cs[0].Backfilling()) != 0 {
		t.Fatalf("after the end: %d index entries, active %v", n, cs[0].Backfilling())
	}
}

// TestBackfillHandsAnExpiredSlotOutAgain: a replica that stops renewing
// (killed) loses its slot at the TTL; the next claim gets that slot again
// under a higher token, and the dead replica can neither renew nor finish
// it.
func TestBackfillHandsAnExpiredSlotOutAgain(t *testing.T) {
	r := newReal(t)
	cs, in := backfillFleet(t, r, 300*time.Millisecond, "a", "b")
	to := time.Now().Truncate(time.Minute)
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: to.Add(-2 * time.Minute), To: to}); err != nil {
		t.Fatal(err)
	}
	dead, _, err := cs[0].claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if err != nil {
		t.Fatal(err)
	}
	if _, turn, _ := cs[1].claimBackfillSlot(context.Background(), "p", backfillSchedule); turn != backfillBusy {
		t.Fatalf("claim while the only parallel slot is held: %v, want busy", turn)
	}
	if ok, err := cs[0].renewBackfillSlot(context.Background(), dead); !ok || err != nil {
		t.Fatalf("renew by the holder: %v %v", ok, err)
	}
	time.Sleep(400 * time.Millisecond)
	again, turn, err := cs[1].claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if err != nil || turn != backfillClaimed || !again.Again || !again.Slot.Equal(dead.Slot) || again.Token <= dead.Token {
		t.Fatalf("claim after the TTL = %+v %v %v; want slot %s again with a token above %d", again, turn, err, dead.Slot, dead.Token)
	}
	if ok, _ := cs[0].renewBackfillSlot(context.Background(), dead); ok {
		t.Fatal("the dead holder renewed a slot handed out again")
	}
	if ok, _ := cs[0].finishBackfillSlot(context.Background(), dead, backfillSlotDone, nil, 0); ok {
		t.Fatal("the dead holder finished a slot handed out again")
	}
	if ok, err := cs[1].finishBackfillSlot(context.Background(), again, backfillSlotDone, nil, 0); !ok || err != nil {
		t.Fatalf("finish by the new holder: %v %v", ok, err)
	}
	p, _ := in.Backfill(context.Background(), "p")
	if p.Done != 1 || p.State != BackfillRunning {
		t.Fatalf("progress = %+v", p)
	}
}

// TestBackfillStopsAfterFailedSlotsInARow and keeps their errors; a
// cancelled backfill hands nothing out but lets its slots in flight
// finish.
func TestBackfillFailuresAndCancel(t *testing.T) {
	r := newReal(t)
	cs, in := backfillFleet(t, r, 5*time.Second, "a")
	c := cs[0]
	to := time.Now().Truncate(time.Minute)
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: to.Add(-10 * time.Minute), To: to}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cl, turn, err := c.claimBackfillSlot(context.Background(), "p", backfillSchedule)
		if err != nil || turn != backfillClaimed {
			t.Fatalf("claim %d: %v %v", i, turn, err)
		}
		if _, err := c.finishBackfillSlot(context.Background(), cl, backfillSlotFailed, &history.Record{Outcome: history.OutcomeFailed, Error: "boom", End: time.Now()}, 3); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := in.Backfill(context.Background(), "p")
	if p.State != BackfillFailed || p.Failed != 3 || len(p.Errors) != 3 || p.Errors[0].Error != "boom" || !p.Errors[0].Slot.Equal(to.Add(-10*time.Minute)) {
		t.Fatalf("after 3 failures in a row: %+v", p)
	}
	if _, turn, _ := c.claimBackfillSlot(context.Background(), "p", backfillSchedule); turn != backfillEnded {
		t.Fatalf("claim of a failed backfill: %v, want ended", turn)
	}

	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: to.Add(-10 * time.Minute), To: to}); err != nil {
		t.Fatalf("a new backfill after a failed one: %v", err)
	}
	held, _, _ := c.claimBackfillSlot(context.Background(), "p", backfillSchedule)
	res, err := in.CancelBackfill(context.Background(), "p", WithActor("tester"), WithReason("wrong range"))
	if err != nil || !res.Changed {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	if _, turn, _ := c.claimBackfillSlot(context.Background(), "p", backfillSchedule); turn != backfillEnded {
		t.Fatalf("claim of a cancelled backfill: %v, want ended", turn)
	}
	if ok, _ := c.renewBackfillSlot(context.Background(), held); !ok {
		t.Fatal("a slot in flight of a cancelled backfill could not renew")
	}
	if ok, _ := c.finishBackfillSlot(context.Background(), held, backfillSlotDone, nil, 0); !ok {
		t.Fatal("a slot in flight of a cancelled backfill could not finish")
	}
	p, _ = in.Backfill(context.Background(), "p")
	if p.State != BackfillCanceled || p.Done != 1 {
		t.Fatalf("after cancel: %+v", p)
	}
	audit, err := in.Audit(context.Background(), AuditQuery{PipelineIDs: []string{"p"}})
	if err != nil || len(audit) != 3 || audit[0].Action != AuditBackfillCancel || audit[0].Reason != "wrong range" || audit[1].Action != AuditBackfill {
		t.Fatalf("audit = %+v %v", audit, err)
	}
}

// TestBackfillRequestsThatCannotRun are refused with what is wrong, and
// a foreign backfill key is neither read as one nor overwritten.
func TestBackfillRequestsThatCannotRun(t *testing.T) {
	r := newReal(t)
	_, in := backfillFleet(t, r, 5*time.Second, "a")
	now := time.Now()
	for _, c := range []struct {
		name string
		req  BackfillRequest
		want error
	}{
		{"unknown pipeline", BackfillRequest{PipelineID: "nope", From: now.Add(-time.Hour), To: now}, ErrUnknownPipeline},
		{"empty range", BackfillRequest{PipelineID: "p", From: now.Add(-time.Hour), To: now.Add(-time.Hour)}, ErrInvalidBackfill},
		{"in the future", BackfillRequest{PipelineID: "p", From: now.Add(-time.Hour), To: now.Add(time.Hour)}, ErrInvalidBackfill},
		{"too many slots", BackfillRequest{PipelineID: "p", From: now.Add(-100 * 24 * time.Hour), To: now}, ErrInvalidBackfill},
		{"no slot in range", BackfillRequest{PipelineID: "p", From: now.Truncate(time.Minute).Add(-59 * time.Second), To: now.Truncate(time.Minute).Add(-time.Second)}, ErrInvalidBackfill},
	} {
		if _, err := in.StartBackfill(context.Background(), c.req); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	key := in.c.keys.backfill("p")
	r.client(0).Set(context.Background(), key, "mine", 0)
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: now.Add(-time.Hour), To: now}); !errors.Is(err, ErrForeignData) {
		t.Fatalf("start over a foreign key: %v, want ErrForeignData", err)
	}
	if v, _ := r.client(0).Get(context.Background(), key).Result(); v != "mine" {
		t.Fatalf("the foreign key now holds %q", v)
	}
	r.client(0).Del(context.Background(), key)
	r.client(0).HSet(context.Background(), key, "id", "1", "state", "running")
	if _, err := in.Backfill(context.Background(), "p"); !errors.Is(err, ErrForeignData) {
		t.Fatalf("read a hash agora did not write: %v, want ErrForeignData", err)
	}
}

// TestBackfillWrittenBackAfterRedisLostIt: a worker that polled a running
// backfill writes it back after Redis lost its data, with its counts and
// cursor; the slot that was in flight is handed out first, again, and the
// rest go on from the cursor.
func TestBackfillWrittenBackAfterRedisLostIt(t *testing.T) {
	r := newReal(t)
	cs, in := backfillFleet(t, r, 5*time.Second, "a")
	c := cs[0]
	to := time.Now().Truncate(time.Minute)
	from := to.Add(-5 * time.Minute)
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: from, To: to, Parallel: 2}); err != nil {
		t.Fatal(err)
	}
	var claims []backfillClaim
	for range 3 {
		cl, turn, err := c.claimBackfillSlot(context.Background(), "p", backfillSchedule)
		if err != nil || turn != backfillClaimed {
			t.Fatalf("claim: %v %v", turn, err)
		}
		claims = append(claims, cl)
		if len(claims) < 3 {
			if _, err := c.finishBackfillSlot(context.Background(), cl, backfillSlotDone, nil, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := c.Backfilling(); len(got) != 0 {
		t.Fatalf("active before any poll: %v", got)
	}
	if err := c.pollControl(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.Backfilling(); len(got) != 1 || got[0] != "p" {
		t.Fatalf("active after a poll: %v", got)
	}
	before, _ := in.Backfill(context.Background(), "p")

	r.client(0).FlushAll(context.Background())
	if _, err := in.Backfill(context.Background(), "p"); !errors.Is(err, ErrNoBackfill) {
		t.Fatalf("after the flush: %v", err)
	}
	if err := c.pollControl(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, err := in.Backfill(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if after.ID != before.ID || after.Done != 2 || !after.Cursor.Equal(claims[2].Slot) || after.State != BackfillRunning || len(after.InFlight) != 1 {
		t.Fatalf("written back: %+v\nbefore: %+v", after, before)
	}
	again, turn, err := c.claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if err != nil || turn != backfillClaimed || !again.Again || !again.Slot.Equal(claims[2].Slot) || again.Token <= claims[2].Token {
		t.Fatalf("first claim after the write-back: %+v %v %v", again, turn, err)
	}
	next, _, _ := c.claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if !next.Slot.Equal(claims[2].Slot.Add(time.Minute)) || next.Again {
		t.Fatalf("second claim after the write-back: %+v, want the slot after the cursor", next)
	}
	if got := c.Backfilling(); len(got) != 1 {
		t.Fatalf("active after the write-back: %v", got)
	}
}

// TestBackfillKeepsTheRunHistoryWithinItsPolicy: a backfill of many slots
// trims the history as scheduled runs do.
func TestBackfillKeepsTheRunHistoryWithinItsPolicy(t *testing.T) {
	r := newReal(t)
	opts := r.options(5 * time.Second)
	opts.RunHistory = history.Policy{Limit: 8}
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	c.SetSchedules(map[string]string{"p": backfillSchedule.String()})
	if err := c.Start(context.Background(), "a", []string{"p"}); err != nil {
		t.Fatal(err)
	}
	in, err := NewInspector(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	to := time.Now().Truncate(time.Minute)
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: to.Add(-40 * time.Minute), To: to}); err != nil {
		t.Fatal(err)
	}
	for {
		cl, turn, err := c.claimBackfillSlot(context.Background(), "p", backfillSchedule)
		if err != nil {
			t.Fatal(err)
		}
		if turn != backfillClaimed {
			break
		}
		rec := &history.Record{Outcome: history.OutcomeSucceeded, Start: time.Now(), End: time.Now()}
		if _, err := c.finishBackfillSlot(context.Background(), cl, backfillSlotDone, rec, 0); err != nil {
			t.Fatal(err)
		}
	}
	// The limit, and at most a trim period (limit/4) more.
	if n, _ := r.client(0).ZCard(context.Background(), c.keys.done("p")).Result(); n > 8+2 {
		t.Fatalf("the history holds %d runs after a 40-slot backfill; the policy keeps 8", n)
	}
}

// TestTriggerSlotIsABackfillOfOne: a slot of the schedule runs as a
// backfill of that slot, with the trigger's parameters; a time between
// slots is refused naming the slots around it.
func TestTriggerSlotIsABackfillOfOne(t *testing.T) {
	r := newReal(t)
	cs, in := backfillFleet(t, r, 5*time.Second, "a")
	slot := time.Now().Truncate(time.Minute).Add(-3 * time.Minute)
	_, err := in.TriggerSlot(context.Background(), BackfillRequest{PipelineID: "p"}, slot.Add(30*time.Second))
	want := "is not a slot of \"p\" (cron=\"* * * * *\"); the slots around it are " + stamp(slot) + " and " + stamp(slot.Add(time.Minute))
	if !errors.Is(err, ErrInvalidBackfill) || !strings.Contains(err.Error(), want) {
		t.Fatalf("trigger between slots: %v\nwant %q", err, want)
	}
	next := time.Now().Truncate(time.Minute).Add(time.Minute)
	if _, err := in.TriggerSlot(context.Background(), BackfillRequest{PipelineID: "p"}, next); !errors.Is(err, ErrInvalidBackfill) || !strings.Contains(err.Error(), "slot "+stamp(next)+" of \"p\" has not begun") {
		t.Fatalf("trigger of a slot to come: %v", err)
	}
	p, err := in.TriggerSlot(context.Background(), BackfillRequest{PipelineID: "p", Params: map[string]string{"day": "2026-01-01"}}, slot)
	if err != nil || p.Total != 1 || p.Request.Params["day"] != "2026-01-01" {
		t.Fatalf("trigger of a slot: %+v, %v", p, err)
	}
	cl, turn, err := cs[0].claimBackfillSlot(context.Background(), "p", backfillSchedule)
	if err != nil || turn != backfillClaimed || !cl.Slot.Equal(slot) {
		t.Fatalf("claim: %+v %v %v", cl, turn, err)
	}
	if _, err := in.TriggerSlot(context.Background(), BackfillRequest{PipelineID: "p", Params: map[string]string{"bad key": "x"}}, slot); !errors.Is(err, ErrInvalidControl) {
		t.Fatalf("a bad parameter: %v", err)
	}
}
