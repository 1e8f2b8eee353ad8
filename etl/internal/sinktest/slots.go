package sinktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/runtime"
)

// SlotStart is the slot the ledger tests run: 2026-01-01 00:00:00 UTC.
const SlotStart int64 = 1767225600

// SlotLeased returns a context carrying the fenced lease of a run of slot
// (a cron or Every run) with token.
func SlotLeased(slot, token int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "sinktest", WorkerID: "w", RunNumber: slot, Slot: true, FencingToken: token})
}

// RunSlots runs the slot ledger tests as subtests of t.
func RunSlots(t *testing.T, db DB) {
	t.Run("SlotCompletedRefusesAnotherRun", func(t *testing.T) { SlotCompletedRefusesAnotherRun(t, db) })
	t.Run("SlotInterruptedIsReRun", func(t *testing.T) { SlotInterruptedIsReRun(t, db) })
	t.Run("SlotReRunUpsertsAsIfOnce", func(t *testing.T) { SlotReRunUpsertsAsIfOnce(t, db) })
	t.Run("SlotCompletedWithoutWrites", func(t *testing.T) { SlotCompletedWithoutWrites(t, db) })
	t.Run("NonSlotRunsKeepTheTokenRule", func(t *testing.T) { NonSlotRunsKeepTheTokenRule(t, db) })
	t.Run("SlotRunsRacing", func(t *testing.T) { SlotRunsRacing(t, db) })
	t.Run("PipelineCompletesItsSlot", func(t *testing.T) { PipelineCompletesItsSlot(t, db) })
	t.Run("LedgerKeepsTheNewestSlots", func(t *testing.T) { LedgerKeepsTheNewestSlots(t, db) })
	if db.FencedTx != nil {
		t.Run("FencedTxSlots", func(t *testing.T) { FencedTxSlots(t, db) })
	}
	RunBackfill(t, db)
	RunReplace(t, db)
}

// LedgerKeepsTheNewestSlots: the ledger keeps fencing.SlotsKept slots per
// resource; older rows go when newer slots are recorded, other resources'
// rows stay.
func LedgerKeepsTheNewestSlots(t *testing.T, db DB) {
	sink := raceTable(t, db, "kept")
	other := raceTable(t, db, "kept_other")
	if err := complete(t, other, SlotLeased(SlotStart, 10)); err != nil {
		t.Fatal(err)
	}
	const extra = 6
	for i := range int64(fencing.SlotsKept + extra) {
		if err := complete(t, sink, SlotLeased(SlotStart+i*60, 100+i)); err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
	}
	if n := db.Ints(t, "SELECT count(*) FROM "+fencing.Ledger+" WHERE resource = 'kept'"); n[0] != fencing.SlotsKept {
		t.Fatalf("ledger rows kept: %d, want %d", n[0], fencing.SlotsKept)
	}
	if oldest := db.Ints(t, "SELECT min(slot) FROM "+fencing.Ledger+" WHERE resource = 'kept'"); oldest[0] != SlotStart+extra*60 {
		t.Fatalf("oldest slot kept: %d, want %d", oldest[0], SlotStart+extra*60)
	}
	if got := ledger(t, db, "kept_other", SlotStart); !slices.Equal(got, []int64{101}) {
		t.Fatalf("another resource's row: %v", got)
	}
}

// complete calls the sink's Complete, which both database sinks have.
func complete(t testing.TB, sink etl.Sink, ctx context.Context) error {
	t.Helper()
	c, ok := sink.(etl.Completer)
	if !ok {
		t.Fatalf("%T is not an etl.Completer", sink)
	}
	return c.Complete(ctx)
}

// ledger returns the slot's ledger row of resource as token*10 +
// completed, or nothing when there is none.
func ledger(t testing.TB, db DB, resource string, slot int64) []int64 {
	return db.Ints(t, fmt.Sprintf("SELECT token * 10 + CASE WHEN completed THEN 1 ELSE 0 END FROM %s WHERE resource = '%s' AND slot = %d", fencing.Ledger, resource, slot))
}

// wantSlotDone checks that err refuses token's run of slot, completed by
// completedBy.
func wantSlotDone(t testing.TB, err error, resource string, slot, token, completedBy int64) {
	t.Helper()
	var done *fencing.SlotDoneError
	if !errors.Is(err, fencing.ErrSlotDone) || !errors.As(err, &done) {
		t.Fatalf("err = %v, want a SlotDoneError", err)
	}
	if done.Resource != resource || done.Slot != slot || done.Token != token || done.CompletedBy != completedBy {
		t.Fatalf("SlotDoneError %+v, want resource %q slot %d token %d completed by %d", *done, resource, slot, token, completedBy)
	}
	if !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("err = %v does not match runtime.ErrSlotCompleted, so the pool would retry the slot", err)
	}
	if errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("err = %v is a stale writer error too", err)
	}
}

// SlotCompletedRefusesAnotherRun: once a run completed its slot, a run of
// the same slot with another token is refused with ErrSlotDone and lands
// nothing, while the next slot is written as usual.
func SlotCompletedRefusesAnotherRun(t *testing.T, db DB) {
	sink := raceTable(t, db, "done")
	first, second := SlotLeased(SlotStart, 100), SlotLeased(SlotStart, 200)
	for range 2 {
		if err := sink.Write(first, Rows("first", 100, 3)); err != nil {
			t.Fatal(err)
		}
	}
	if got := ledger(t, db, "done", SlotStart); !slices.Equal(got, []int64{1000}) {
		t.Fatalf("ledger while the run writes: %v, want token 100 not completed", got)
	}
	if err := complete(t, sink, first); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, db, "done", SlotStart); !slices.Equal(got, []int64{1001}) {
		t.Fatalf("ledger after completion: %v, want token 100 completed", got)
	}
	before, staleBefore := fencing.SlotDoneRefusals(), fencing.Refusals()
	wantSlotDone(t, sink.Write(second, Rows("second", 200, 4)), "done", SlotStart, 200, 100)
	wantSlotDone(t, complete(t, sink, second), "done", SlotStart, 200, 100)
	if got := fencing.SlotDoneRefusals() - before; got != 2 {
		t.Errorf("slot-done refusals counted: %d, want 2", got)
	}
	if got := fencing.Refusals() - staleBefore; got != 0 {
		t.Errorf("stale refusals counted: %d, want 0", got)
	}
	if got := db.Ints(t, "SELECT count(*) FROM done WHERE writer = 'second'"); got[0] != 0 {
		t.Fatalf("the refused run left %d rows", got[0])
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'done'"); !slices.Equal(got, []int64{100}) {
		t.Fatalf("the refused run moved the stored token: %v", got)
	}
	next := SlotLeased(SlotStart+60, 300)
	if err := sink.Write(next, Rows("next", 300, 2)); err != nil {
		t.Fatalf("the next slot: %v", err)
	}
	if err := complete(t, sink, next); err != nil {
		t.Fatal(err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM done"); got[0] != 8 {
		t.Fatalf("rows: %d, want 6 from the first run and 2 from the next slot", got[0])
	}
}

// SlotInterruptedIsReRun: a run that wrote and never completed (its holder
// died) is taken over by a run of the same slot with a higher token; its
// batches, in insert mode, stay. The taken-over run is then a stale writer,
// and once the re-run completes any other run is refused.
func SlotInterruptedIsReRun(t *testing.T, db DB) {
	sink := raceTable(t, db, "rerun")
	dead, rerun := SlotLeased(SlotStart, 100), SlotLeased(SlotStart, 200)
	if err := sink.Write(dead, Rows("dead", 100, 3)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(rerun, Rows("rerun", 200, 5)); err != nil {
		t.Fatalf("the re-run of an interrupted slot: %v", err)
	}
	if got := ledger(t, db, "rerun", SlotStart); !slices.Equal(got, []int64{2000}) {
		t.Fatalf("ledger after the take-over: %v, want token 200 not completed", got)
	}
	var stale *fencing.StaleWriterError
	if err := sink.Write(dead, Rows("dead", 100, 1)); !errors.As(err, &stale) || stale.Token != 100 || stale.Stored != 200 {
		t.Fatalf("the earlier run after the re-run: err = %v, want a stale writer error 100 < 200", err)
	}
	if err := complete(t, sink, dead); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("the earlier run completing after the re-run: err = %v, want ErrStaleWriter", err)
	}
	if err := complete(t, sink, rerun); err != nil {
		t.Fatal(err)
	}
	wantSlotDone(t, sink.Write(SlotLeased(SlotStart, 300), Rows("third", 300, 1)), "rerun", SlotStart, 300, 200)
	got := db.Strings(t, "SELECT writer FROM rerun ORDER BY id")
	want := []string{"dead", "dead", "dead", "rerun", "rerun", "rerun", "rerun", "rerun"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want the interrupted run's batch and the re-run's", got)
	}
}

// SlotReRunUpsertsAsIfOnce: with upsert, a re-run that writes the same keys
// leaves the table as if the slot had run once.
func SlotReRunUpsertsAsIfOnce(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE once_up (id bigint PRIMARY KEY, v text NOT NULL)")
	sink := db.NewSink(t, Config{Table: "once_up", Mode: "upsert", Key: []string{"id"}, Columns: []string{"id", "v"}})
	if err := sink.Write(SlotLeased(SlotStart, 100), []etl.Record{{"id": 1, "v": "dead"}, {"id": 2, "v": "dead"}}); err != nil {
		t.Fatal(err)
	}
	rerun := SlotLeased(SlotStart, 200)
	for _, ids := range [][]int64{{1, 2}, {3}} {
		var recs []etl.Record
		for _, id := range ids {
			recs = append(recs, etl.Record{"id": id, "v": "rerun"})
		}
		if err := sink.Write(rerun, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := complete(t, sink, rerun); err != nil {
		t.Fatal(err)
	}
	wantSlotDone(t, sink.Write(SlotLeased(SlotStart, 300), []etl.Record{{"id": 1, "v": "late"}}), "once_up", SlotStart, 300, 200)
	got := db.Strings(t, "SELECT cast(id AS text) || '=' || v FROM once_up ORDER BY id")
	if want := []string{"1=rerun", "2=rerun", "3=rerun"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

// SlotCompletedWithoutWrites: a run that completes without writing (its
// source had nothing) still marks the slot done; one that completes an
// interrupted slot without writing takes it over and stores its token, so
// the interrupted run cannot add to the slot afterwards.
func SlotCompletedWithoutWrites(t *testing.T, db DB) {
	sink := raceTable(t, db, "empty")
	if err := complete(t, sink, SlotLeased(SlotStart, 100)); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, db, "empty", SlotStart); !slices.Equal(got, []int64{1001}) {
		t.Fatalf("ledger: %v, want token 100 completed", got)
	}
	wantSlotDone(t, sink.Write(SlotLeased(SlotStart, 200), Rows("late", 200, 1)), "empty", SlotStart, 200, 100)

	slot := SlotStart + 60
	dead := SlotLeased(slot, 300)
	if err := sink.Write(dead, Rows("dead", 300, 2)); err != nil {
		t.Fatal(err)
	}
	if err := complete(t, sink, SlotLeased(slot, 400)); err != nil {
		t.Fatalf("completing an interrupted slot without writing: %v", err)
	}
	if got := ledger(t, db, "empty", slot); !slices.Equal(got, []int64{4001}) {
		t.Fatalf("ledger: %v, want token 400 completed", got)
	}
	if err := sink.Write(dead, Rows("dead", 300, 1)); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("the interrupted run after the slot was completed: err = %v, want ErrStaleWriter", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM empty"); got[0] != 2 {
		t.Fatalf("rows: %d, want the interrupted run's 2", got[0])
	}
}

// NonSlotRunsKeepTheTokenRule: continuous and once runs (no slot) are
// fenced by their token alone and leave the ledger empty, whatever their
// run number.
func NonSlotRunsKeepTheTokenRule(t *testing.T, db DB) {
	sink := raceTable(t, db, "noslot")
	continuous := func(token int64) context.Context {
		return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "p", RunNumber: token, FencingToken: token})
	}
	steps := []struct {
		ctx   context.Context
		stale bool
	}{
		{continuous(100), false},
		{Leased(200), false}, // a run number that looks like a slot, but is not one
		{continuous(100), true},
		{continuous(300), false},
	}
	for i, s := range steps {
		err := sink.Write(s.ctx, Rows("w", int64(i), 1))
		if s.stale != errors.Is(err, fencing.ErrStaleWriter) || (!s.stale && err != nil) {
			t.Fatalf("step %d: err = %v, stale wanted %v", i, err, s.stale)
		}
		if err := complete(t, sink, s.ctx); err != nil {
			t.Fatalf("step %d: Complete of a run without a slot: %v", i, err)
		}
	}
	if got := db.Ints(t, "SELECT count(*) FROM "+fencing.Ledger+" WHERE resource = 'noslot'"); got[0] != 0 {
		t.Fatalf("runs without a slot left %d ledger rows", got[0])
	}
	if got := db.Ints(t, "SELECT count(*) FROM noslot"); got[0] != 3 {
		t.Fatalf("rows: %d, want 3", got[0])
	}
}

// SlotRunsRacing: runs of one slot with different tokens write the same
// keys and complete, all at once. Exactly one completes; every other ends
// refused (stale or slot done), and the table holds the winner's values
// only, as if the slot had run once.
func SlotRunsRacing(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE race_up (id bigint PRIMARY KEY, token bigint NOT NULL)")
	sink := db.NewSink(t, Config{Table: "race_up", Mode: "upsert", Key: []string{"id"}, Columns: []string{"id", "token"}})
	const runs, batches = 4, 5
	results := make([]error, runs)
	var wg sync.WaitGroup
	for r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := int64(1001 + r)
			ctx := SlotLeased(SlotStart, token)
			for b := range batches {
				if err := sink.Write(ctx, []etl.Record{{"id": int64(b), "token": token}, {"id": int64(b + 1), "token": token}}); err != nil {
					results[r] = err
					return
				}
			}
			results[r] = complete(t, sink, ctx)
		}()
	}
	wg.Wait()
	winner := int64(0)
	for r, err := range results {
		switch {
		case err == nil:
			if winner != 0 {
				t.Fatalf("two runs completed the slot: tokens %d and %d", winner, 1001+r)
			}
			winner = int64(1001 + r)
		case errors.Is(err, fencing.ErrStaleWriter), errors.Is(err, fencing.ErrSlotDone):
		default:
			t.Fatalf("run %d: %v", r, err)
		}
	}
	if winner == 0 {
		t.Fatalf("no run completed the slot: %v", results)
	}
	if got := db.Ints(t, "SELECT DISTINCT token FROM race_up"); !slices.Equal(got, []int64{winner}) {
		t.Fatalf("tokens in the table %v, want only the winner's %d", got, winner)
	}
	if got := ledger(t, db, "race_up", SlotStart); !slices.Equal(got, []int64{winner*10 + 1}) {
		t.Fatalf("ledger %v, want %d completed", got, winner)
	}
	t.Logf("token %d completed; the others: %v", winner, results)
}

// PipelineCompletesItsSlot: etl.New's pipeline completes its slot when the
// run succeeds, and a second run of the slot fails with ErrSlotDone having
// written nothing.
func PipelineCompletesItsSlot(t *testing.T, db DB) {
	sink := raceTable(t, db, "piped")
	run := func(token int64) error {
		p := etl.New(etl.NewIterableSource(Rows("run", token, 5)), []etl.Sink{sink}, etl.WithBatchSize(2))
		return p.Run(SlotLeased(SlotStart, token))
	}
	if err := run(100); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, db, "piped", SlotStart); !slices.Equal(got, []int64{1001}) {
		t.Fatalf("ledger after the run: %v, want token 100 completed", got)
	}
	err := run(200)
	wantSlotDone(t, err, "piped", SlotStart, 200, 100)
	if got := db.Ints(t, "SELECT DISTINCT token FROM piped"); !slices.Equal(got, []int64{100}) {
		t.Fatalf("tokens in the table %v, want only the first run's", got)
	}
}

// FencedTxSlots: FencedTx applies the ledger to the run its context
// carries: CompletesSlot marks the slot in the last transaction,
// CompleteSlot afterwards; an interrupted slot is taken over; a context
// without a slot keeps the token rule.
func FencedTxSlots(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE ftx (v bigint NOT NULL)")
	first := SlotLeased(SlotStart, 100)
	if err := db.FencedTx(first, "ftx", 100, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.FencedTx(first, "ftx", 100, 2, fencing.CompletesSlot()); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, db, "ftx", SlotStart); !slices.Equal(got, []int64{1001}) {
		t.Fatalf("ledger after CompletesSlot: %v", got)
	}
	wantSlotDone(t, db.FencedTx(SlotLeased(SlotStart, 200), "ftx", 200, 3), "ftx", SlotStart, 200, 100)

	// A failed last transaction completes nothing.
	second := SlotLeased(SlotStart+60, 300)
	if err := db.FencedTx(second, "ftx", 300, -1, fencing.CompletesSlot()); err == nil {
		t.Fatal("a transaction whose statement failed committed")
	}
	if got := ledger(t, db, "ftx", SlotStart+60); len(got) != 0 {
		t.Fatalf("a rolled-back transaction left a ledger row: %v", got)
	}
	if err := db.FencedTx(second, "ftx", 300, 4); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteSlot(second, "ftx", 300); err != nil {
		t.Fatal(err)
	}
	wantSlotDone(t, db.CompleteSlot(SlotLeased(SlotStart+60, 350), "ftx", 350), "ftx", SlotStart+60, 350, 300)

	third, rerun := SlotLeased(SlotStart+120, 400), SlotLeased(SlotStart+120, 500)
	if err := db.FencedTx(third, "ftx", 400, 5); err != nil {
		t.Fatal(err)
	}
	if err := db.FencedTx(rerun, "ftx", 500, 6, fencing.CompletesSlot()); err != nil {
		t.Fatalf("the re-run of an interrupted slot: %v", err)
	}
	if err := db.FencedTx(third, "ftx", 400, 7); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("the interrupted run after the re-run: err = %v, want ErrStaleWriter", err)
	}
	// A token the context's lease does not carry (a replayed old token) is
	// fenced by the token rule alone.
	if err := db.FencedTx(rerun, "ftx", 450, 8); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("an old token: err = %v, want ErrStaleWriter", err)
	}
	if err := db.CompleteSlot(Leased(600), "ftx", 600); err != nil {
		t.Fatalf("CompleteSlot of a run without a slot: %v", err)
	}
	if got := db.Ints(t, "SELECT v FROM ftx ORDER BY v"); !slices.Equal(got, []int64{1, 2, 4, 5, 6}) {
		t.Fatalf("rows %v, want [1 2 4 5 6]", got)
	}
}

// Migration: a database that has agora_fencing from before the ledger (and
// no agora_slots) keeps its stored tokens and gains the ledger at its first
// fenced write. db must be a database nothing has written to through a
// sink yet.
func Migration(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE agora_fencing (resource text PRIMARY KEY, token bigint NOT NULL)")
	db.Exec(t, "INSERT INTO agora_fencing (resource, token) VALUES ('old', 50)")
	sink := raceTable(t, db, "old")
	if err := sink.Write(SlotLeased(SlotStart, 40), Rows("stale", 40, 1)); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("a token below the one stored before the upgrade: err = %v, want ErrStaleWriter", err)
	}
	ctx := SlotLeased(SlotStart, 60)
	if err := sink.Write(ctx, Rows("new", 60, 2)); err != nil {
		t.Fatal(err)
	}
	if err := complete(t, sink, ctx); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, db, "old", SlotStart); !slices.Equal(got, []int64{601}) {
		t.Fatalf("ledger after the upgrade: %v", got)
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'old'"); !slices.Equal(got, []int64{60}) {
		t.Fatalf("stored token %v, want [60]", got)
	}
}
