package sinktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/runtime"
)

// BackfillLeased returns a context carrying the fenced lease of a
// backfill run of slot (fleet backfill, fleet trigger --slot) with token.
func BackfillLeased(slot, token int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "sinktest", WorkerID: "w", RunNumber: slot, Slot: true, Backfill: true, FencingToken: token})
}

// ReprocessLeased returns a context carrying the fenced lease of a
// backfill run that reprocesses slot (a backfill with --reprocess) with
// token.
func ReprocessLeased(slot, token int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "sinktest", WorkerID: "w", RunNumber: slot, Slot: true, Backfill: true, Reprocess: true, FencingToken: token})
}

// RunBackfill runs the tests of backfill runs (beside the scheduled runs,
// forgotten slots, reprocess) as subtests of t.
func RunBackfill(t *testing.T, db DB) {
	t.Run("BackfillBesideAScheduledRun", func(t *testing.T) { BackfillBesideAScheduledRun(t, db) })
	t.Run("ScheduledRunTakesABackfillOver", func(t *testing.T) { ScheduledRunTakesABackfillOver(t, db) })
	t.Run("BackfillOfACompletedSlot", func(t *testing.T) { BackfillOfACompletedSlot(t, db) })
	t.Run("BackfillLeavesABusySlot", func(t *testing.T) { BackfillLeavesABusySlot(t, db) })
	t.Run("BackfillTakesOverASupersededRun", func(t *testing.T) { BackfillTakesOverASupersededRun(t, db) })
	t.Run("NonSlotRunsBesideABackfill", func(t *testing.T) { NonSlotRunsBesideABackfill(t, db) })
	t.Run("ForgottenSlot", func(t *testing.T) { ForgottenSlot(t, db) })
	t.Run("Reprocess", func(t *testing.T) { Reprocess(t, db) })
}

// storedToken returns the token agora_fencing stores for resource.
func storedToken(t testing.TB, db DB, resource string) []int64 {
	return db.Ints(t, "SELECT token FROM "+fencing.Table+" WHERE resource = '"+resource+"'")
}

// wantStale fails t unless err is a stale writer error of token below
// newer.
func wantStale(t testing.TB, err error, token, newer int64) {
	t.Helper()
	var stale *fencing.StaleWriterError
	if !errors.As(err, &stale) || stale.Token != token || stale.Stored != newer {
		t.Fatalf("err = %v, want a stale writer error %d < %d", err, token, newer)
	}
}

// BackfillBesideAScheduledRun: a backfill run of a slot and the scheduled
// run of the next slot write the same table in turn, the backfill's token
// higher or lower; every batch of both commits, both complete, and the
// stored token stays the scheduled run's.
func BackfillBesideAScheduledRun(t *testing.T, db DB) {
	for _, c := range []struct {
		name                string
		backfill, scheduled int64
	}{
		{"backfill token higher", 300, 200},
		{"backfill token lower", 100, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			table := fmt.Sprintf("beside_%d", c.backfill)
			sink := raceTable(t, db, table)
			b, s := BackfillLeased(SlotStart, c.backfill), SlotLeased(SlotStart+3600, c.scheduled)
			for i := range 3 {
				if err := sink.Write(b, Rows("b", c.backfill, 2)); err != nil {
					t.Fatalf("batch %d of the backfill: %v", i, err)
				}
				if err := sink.Write(s, Rows("s", c.scheduled, 3)); err != nil {
					t.Fatalf("batch %d of the scheduled run: %v", i, err)
				}
			}
			for _, ctx := range []context.Context{b, s} {
				if err := complete(t, sink, ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := db.Ints(t, "SELECT count(*) FROM "+table); got[0] != 15 {
				t.Fatalf("rows: %d, want 15", got[0])
			}
			if got := ledger(t, db, table, SlotStart); !slices.Equal(got, []int64{c.backfill*10 + 1}) {
				t.Fatalf("the backfilled slot's ledger row: %v", got)
			}
			if got := ledger(t, db, table, SlotStart+3600); !slices.Equal(got, []int64{c.scheduled*10 + 1}) {
				t.Fatalf("the scheduled slot's ledger row: %v", got)
			}
			if got := storedToken(t, db, table); !slices.Equal(got, []int64{c.scheduled}) {
				t.Fatalf("stored token %v, want the scheduled run's %d", got, c.scheduled)
			}
		})
	}
}

// ScheduledRunTakesABackfillOver: a scheduled (catch-up) run of a slot a
// backfill run has not finished, with a higher token, takes the slot's row
// over at its first write and stores its token; the backfill's next batch
// and its completion are then refused as stale.
func ScheduledRunTakesABackfillOver(t *testing.T, db DB) {
	sink := raceTable(t, db, "catchup")
	b, s := BackfillLeased(SlotStart, 100), SlotLeased(SlotStart, 200)
	if err := sink.Write(b, Rows("b", 100, 2)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(s, Rows("s", 200, 1)); err != nil {
		t.Fatalf("the scheduled run taking the backfill's slot over: %v", err)
	}
	if got := ledger(t, db, "catchup", SlotStart); !slices.Equal(got, []int64{2000}) {
		t.Fatalf("ledger after the take-over: %v, want token 200 not completed", got)
	}
	if got := storedToken(t, db, "catchup"); !slices.Equal(got, []int64{200}) {
		t.Fatalf("stored token %v, want 200", got)
	}
	wantStale(t, sink.Write(b, Rows("b", 100, 1)), 100, 200)
	wantStale(t, complete(t, sink, b), 100, 200)
	if err := sink.Write(s, Rows("s", 200, 1)); err != nil {
		t.Fatalf("the scheduled run's next batch: %v", err)
	}
	if err := complete(t, sink, s); err != nil {
		t.Fatal(err)
	}
	if got := db.Strings(t, "SELECT writer FROM catchup ORDER BY id"); !slices.Equal(got, []string{"b", "b", "s", "s"}) {
		t.Fatalf("rows %v", got)
	}
}

// BackfillOfACompletedSlot: a backfill run of a slot a scheduled run
// completed is refused with ErrSlotDone, writing or completing, with a
// higher token or a lower one.
func BackfillOfACompletedSlot(t *testing.T, db DB) {
	sink := raceTable(t, db, "bdone")
	s := SlotLeased(SlotStart, 200)
	if err := sink.Write(s, Rows("s", 200, 1)); err != nil {
		t.Fatal(err)
	}
	if err := complete(t, sink, s); err != nil {
		t.Fatal(err)
	}
	for _, token := range []int64{300, 100} {
		b := BackfillLeased(SlotStart, token)
		wantSlotDone(t, sink.Write(b, Rows("b", token, 1)), "bdone", SlotStart, token, 200)
		wantSlotDone(t, complete(t, sink, b), "bdone", SlotStart, token, 200)
	}
	if got := db.Ints(t, "SELECT count(*) FROM bdone WHERE writer = 'b'"); got[0] != 0 {
		t.Fatalf("the refused backfill left %d rows", got[0])
	}
	if got := storedToken(t, db, "bdone"); !slices.Equal(got, []int64{200}) {
		t.Fatalf("stored token %v, want 200", got)
	}
}

// BackfillLeavesABusySlot: a backfill run of a slot whose scheduled run
// wrote it, has not completed, and still holds the stored token (so its
// next batches do not read the ledger) is refused with ErrSlotBusy,
// writing, completing or reprocessing, and changes nothing; the scheduled
// run's next batch and completion still commit.
func BackfillLeavesABusySlot(t *testing.T, db DB) {
	sink := raceTable(t, db, "busy")
	s := SlotLeased(SlotStart, 100)
	if err := sink.Write(s, Rows("s", 100, 1)); err != nil {
		t.Fatal(err)
	}
	before := fencing.SlotBusyRefusals()
	for _, b := range []context.Context{BackfillLeased(SlotStart, 200), ReprocessLeased(SlotStart, 300)} {
		lease, _ := runtime.LeaseFromContext(b)
		for _, err := range []error{sink.Write(b, Rows("b", lease.FencingToken, 1)), complete(t, sink, b)} {
			var be *fencing.SlotBusyError
			if !errors.Is(err, fencing.ErrSlotBusy) || !errors.As(err, &be) || be.Resource != "busy" || be.Slot != SlotStart || be.Token != lease.FencingToken || be.Busy != 100 {
				t.Fatalf("a backfill beside the slot's live scheduled run: err = %v, want a SlotBusyError", err)
			}
			if errors.Is(err, runtime.ErrSlotCompleted) || errors.Is(err, fencing.ErrStaleWriter) {
				t.Fatalf("err = %v passes for a completed slot or a stale writer", err)
			}
		}
	}
	if got := fencing.SlotBusyRefusals() - before; got != 4 {
		t.Errorf("busy-slot refusals counted: %d, want 4", got)
	}
	if got := ledger(t, db, "busy", SlotStart); !slices.Equal(got, []int64{1000}) {
		t.Fatalf("ledger after the refusals: %v, want token 100 not completed", got)
	}
	if err := sink.Write(s, Rows("s", 100, 1)); err != nil {
		t.Fatalf("the scheduled run's next batch: %v", err)
	}
	if err := complete(t, sink, s); err != nil {
		t.Fatal(err)
	}
	if got := db.Strings(t, "SELECT writer FROM busy ORDER BY id"); !slices.Equal(got, []string{"s", "s"}) {
		t.Fatalf("rows %v", got)
	}
	if got := storedToken(t, db, "busy"); !slices.Equal(got, []int64{100}) {
		t.Fatalf("stored token %v, want 100", got)
	}
}

// BackfillTakesOverASupersededRun: a backfill run takes over the
// unfinished row of a scheduled run once a newer token wrote the resource
// (that run is then refused by the token rule), and the unfinished row of
// another backfill run of a lower token (refused at its next batch).
func BackfillTakesOverASupersededRun(t *testing.T, db DB) {
	sink := raceTable(t, db, "superseded")
	s, next := SlotLeased(SlotStart, 100), SlotLeased(SlotStart+60, 150)
	if err := sink.Write(s, Rows("s", 100, 1)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(next, Rows("next", 150, 1)); err != nil {
		t.Fatal(err)
	}
	b := BackfillLeased(SlotStart, 200)
	if err := sink.Write(b, Rows("b", 200, 1)); err != nil {
		t.Fatalf("a backfill of a superseded run's slot: %v", err)
	}
	if got := ledger(t, db, "superseded", SlotStart); !slices.Equal(got, []int64{2000}) {
		t.Fatalf("ledger after the take-over: %v, want token 200 not completed", got)
	}
	wantStale(t, sink.Write(s, Rows("s", 100, 1)), 100, 150)

	// A backfill run takes over another backfill run's unfinished row.
	b1, b2 := BackfillLeased(SlotStart+120, 300), BackfillLeased(SlotStart+120, 400)
	if err := sink.Write(b1, Rows("b1", 300, 1)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(b2, Rows("b2", 400, 1)); err != nil {
		t.Fatalf("a backfill taking another's unfinished slot over: %v", err)
	}
	wantStale(t, sink.Write(b1, Rows("b1", 300, 1)), 300, 400)
	for _, ctx := range []context.Context{b, b2, next} {
		if err := complete(t, sink, ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := storedToken(t, db, "superseded"); !slices.Equal(got, []int64{150}) {
		t.Fatalf("stored token %v, want the scheduled run's 150", got)
	}
	if got := db.Strings(t, "SELECT writer FROM superseded ORDER BY id"); !slices.Equal(got, []string{"s", "next", "b", "b1", "b2"}) {
		t.Fatalf("rows %v", got)
	}
}

// NonSlotRunsBesideABackfill: a backfill run stores no token, so runs
// without a slot keep the token rule among themselves alone, and the
// backfill goes on whatever token they store.
func NonSlotRunsBesideABackfill(t *testing.T, db DB) {
	sink := raceTable(t, db, "mixed")
	b := BackfillLeased(SlotStart, 300)
	if err := sink.Write(b, Rows("b", 300, 1)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(Leased(200), Rows("low", 200, 1)); err != nil {
		t.Fatalf("a run without a slot below the backfill's token: %v", err)
	}
	wantStale(t, sink.Write(Leased(100), Rows("lower", 100, 1)), 100, 200)
	if err := sink.Write(Leased(400), Rows("high", 400, 1)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(b, Rows("b", 300, 1)); err != nil {
		t.Fatalf("the backfill's next batch below the newer token: %v", err)
	}
	if err := complete(t, sink, b); err != nil {
		t.Fatal(err)
	}
	if got := db.Strings(t, "SELECT writer FROM mixed ORDER BY id"); !slices.Equal(got, []string{"b", "low", "high", "b"}) {
		t.Fatalf("rows %v", got)
	}
	if got := storedToken(t, db, "mixed"); !slices.Equal(got, []int64{400}) {
		t.Fatalf("stored token %v, want 400", got)
	}
}

// fillLedger gives resource ledger rows, completed, for the n slots after
// SlotStart+from*60, a minute apart.
func fillLedger(t testing.TB, db DB, resource string, from, n int64) {
	db.Exec(t, fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM s WHERE i < %d)
INSERT INTO %s (resource, slot, token, completed) SELECT '%s', %d + i * 60, 10 + i, TRUE FROM s`, from, from+n-1, fencing.Ledger, resource, SlotStart))
}

// ForgottenSlot: a slot with no ledger row is written while the ledger
// holds fewer than fencing.SlotsKept rows (the row is kept), and refused
// with ErrSlotForgotten once it holds SlotsKept rows, all of newer slots;
// nothing of the refused run lands.
func ForgottenSlot(t *testing.T, db DB) {
	sink := raceTable(t, db, "forgot")
	newest := SlotLeased(SlotStart+fencing.SlotsKept*60, 5000)
	if err := sink.Write(newest, Rows("newest", 5000, 1)); err != nil {
		t.Fatal(err)
	}
	fillLedger(t, db, "forgot", 1, fencing.SlotsKept-2) // SlotsKept-1 rows in all, every one newer than SlotStart
	old := SlotLeased(SlotStart, 6000)
	if err := sink.Write(old, Rows("old", 6000, 1)); err != nil {
		t.Fatalf("a slot older than a ledger of SlotsKept-1 rows: %v", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM "+fencing.Ledger+" WHERE resource = 'forgot'"); got[0] != fencing.SlotsKept {
		t.Fatalf("ledger rows: %d, want %d", got[0], fencing.SlotsKept)
	}
	if got := ledger(t, db, "forgot", SlotStart); !slices.Equal(got, []int64{60000}) {
		t.Fatalf("the old slot's row: %v, want kept", got)
	}
	before := fencing.SlotForgottenRefusals()
	older := SlotLeased(SlotStart-60, 7000)
	olderBackfill := BackfillLeased(SlotStart-60, 7100)
	for _, err := range []error{sink.Write(older, Rows("older", 7000, 1)), complete(t, sink, older), sink.Write(olderBackfill, Rows("older", 7100, 1))} {
		var fe *fencing.SlotForgottenError
		if !errors.Is(err, fencing.ErrSlotForgotten) || !errors.As(err, &fe) || fe.Slot != SlotStart-60 || fe.Oldest != SlotStart || fe.Resource != "forgot" {
			t.Fatalf("a slot older than a full ledger's: err = %v, want a SlotForgottenError", err)
		}
		if errors.Is(err, runtime.ErrSlotCompleted) || errors.Is(err, fencing.ErrStaleWriter) {
			t.Fatalf("err = %v passes for a completed slot or a stale writer", err)
		}
	}
	if got := fencing.SlotForgottenRefusals() - before; got != 3 {
		t.Errorf("forgotten-slot refusals counted: %d, want 3 (a refused batch is not retried)", got)
	}
	if got := db.Ints(t, "SELECT count(*) FROM forgot WHERE writer = 'older'"); got[0] != 0 {
		t.Fatalf("the refused run left %d rows", got[0])
	}
	if got := ledger(t, db, "forgot", SlotStart-60); len(got) != 0 {
		t.Fatalf("the refused slot has a ledger row: %v", got)
	}
	if got := ledger(t, db, "forgot", SlotStart); !slices.Equal(got, []int64{60000}) {
		t.Fatalf("the refusal changed the ledger: %v", got)
	}
}

// Reprocess: a reprocessing backfill run takes over a slot a lower token
// completed (the row takes its token, not completed until it completes,
// and no token is stored); a completed row of a higher token still
// refuses it, and a scheduled run is refused by the reprocessed slot as by
// any completed one.
func Reprocess(t *testing.T, db DB) {
	sink := raceTable(t, db, "reproc")
	first := SlotLeased(SlotStart, 100)
	if err := sink.Write(first, Rows("first", 100, 2)); err != nil {
		t.Fatal(err)
	}
	if err := complete(t, sink, first); err != nil {
		t.Fatal(err)
	}
	re := ReprocessLeased(SlotStart, 200)
	if err := sink.Write(re, Rows("re", 200, 1)); err != nil {
		t.Fatalf("reprocessing a slot a lower token completed: %v", err)
	}
	if got := ledger(t, db, "reproc", SlotStart); !slices.Equal(got, []int64{2000}) {
		t.Fatalf("ledger after the take-over: %v, want token 200 not completed", got)
	}
	if err := sink.Write(re, Rows("re", 200, 1)); err != nil {
		t.Fatalf("the reprocess's next batch: %v", err)
	}
	if err := complete(t, sink, re); err != nil {
		t.Fatal(err)
	}
	wantSlotDone(t, sink.Write(ReprocessLeased(SlotStart, 150), Rows("low", 150, 1)), "reproc", SlotStart, 150, 200)
	wantSlotDone(t, sink.Write(BackfillLeased(SlotStart, 250), Rows("plain", 250, 1)), "reproc", SlotStart, 250, 200)
	wantSlotDone(t, sink.Write(SlotLeased(SlotStart, 300), Rows("scheduled", 300, 1)), "reproc", SlotStart, 300, 200)

	// A reprocessing run that finds nothing to write still replaces the
	// completed slot.
	empty := ReprocessLeased(SlotStart, 400)
	if err := complete(t, sink, empty); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, db, "reproc", SlotStart); !slices.Equal(got, []int64{4001}) {
		t.Fatalf("ledger after an empty reprocess: %v, want token 400 completed", got)
	}
	if got := db.Strings(t, "SELECT writer FROM reproc ORDER BY id"); !slices.Equal(got, []string{"first", "first", "re", "re"}) {
		t.Fatalf("rows %v", got)
	}
	if got := storedToken(t, db, "reproc"); !slices.Equal(got, []int64{100}) {
		t.Fatalf("stored token %v, want the scheduled run's 100", got)
	}
}
