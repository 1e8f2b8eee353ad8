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

// ReprocessLeased returns a context carrying the fenced lease of a run
// that reprocesses slot (a backfill with --reprocess) with token.
func ReprocessLeased(slot, token int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "sinktest", WorkerID: "w", RunNumber: slot, Slot: true, Reprocess: true, FencingToken: token})
}

// RunBackfill runs the tests of slot runs that run beside each other (a
// backfill beside the scheduled slots) as subtests of t.
func RunBackfill(t *testing.T, db DB) {
	t.Run("DifferentSlotsNeverRefuseEachOther", func(t *testing.T) { DifferentSlotsNeverRefuseEachOther(t, db) })
	t.Run("StaleRunOfItsSlotAfterATakeOver", func(t *testing.T) { StaleRunOfItsSlotAfterATakeOver(t, db) })
	t.Run("NonSlotRunBelowASlotRunsToken", func(t *testing.T) { NonSlotRunBelowASlotRunsToken(t, db) })
	t.Run("ForgottenSlot", func(t *testing.T) { ForgottenSlot(t, db) })
	t.Run("Reprocess", func(t *testing.T) { Reprocess(t, db) })
}

// DifferentSlotsNeverRefuseEachOther: runs of two slots write batches in
// turn and complete, the higher token first or second; both commit every
// batch and complete, and the resource stores the higher token.
func DifferentSlotsNeverRefuseEachOther(t *testing.T, db DB) {
	for _, c := range []struct {
		name        string
		first, next int64 // tokens of the run that writes first and of the other
	}{
		{"lower token first", 100, 200},
		{"higher token first", 400, 300},
	} {
		t.Run(c.name, func(t *testing.T) {
			table := fmt.Sprintf("slots_%d", c.first)
			sink := raceTable(t, db, table)
			a, b := SlotLeased(SlotStart, c.first), SlotLeased(SlotStart+3600, c.next)
			for i := range 3 {
				if err := sink.Write(a, Rows("a", c.first, 2)); err != nil {
					t.Fatalf("batch %d of slot a: %v", i, err)
				}
				if err := sink.Write(b, Rows("b", c.next, 3)); err != nil {
					t.Fatalf("batch %d of slot b: %v", i, err)
				}
			}
			for _, ctx := range []context.Context{a, b} {
				if err := complete(t, sink, ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := db.Ints(t, "SELECT count(*) FROM "+table); got[0] != 15 {
				t.Fatalf("rows: %d, want 15", got[0])
			}
			if got := ledger(t, db, table, SlotStart); !slices.Equal(got, []int64{c.first*10 + 1}) {
				t.Fatalf("slot a's ledger row: %v", got)
			}
			if got := ledger(t, db, table, SlotStart+3600); !slices.Equal(got, []int64{c.next*10 + 1}) {
				t.Fatalf("slot b's ledger row: %v", got)
			}
			if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = '"+table+"'"); !slices.Equal(got, []int64{max(c.first, c.next)}) {
				t.Fatalf("stored token %v, want the higher", got)
			}
		})
	}
}

// StaleRunOfItsSlotAfterATakeOver: a run that lost its lease goes on
// writing beside another slot's newer run, and is refused as soon as a run
// of its own slot took it over.
func StaleRunOfItsSlotAfterATakeOver(t *testing.T, db DB) {
	sink := raceTable(t, db, "lost")
	lost, other, rerun := SlotLeased(SlotStart, 100), SlotLeased(SlotStart+60, 300), SlotLeased(SlotStart, 200)
	for _, ctx := range []context.Context{lost, other, lost} {
		if err := sink.Write(ctx, Rows("w", 0, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Write(rerun, Rows("rerun", 200, 1)); err != nil {
		t.Fatalf("the take-over: %v", err)
	}
	var stale *fencing.StaleWriterError
	if err := sink.Write(lost, Rows("lost", 100, 1)); !errors.As(err, &stale) || stale.Token != 100 || stale.Stored != 200 {
		t.Fatalf("the run that lost its slot: err = %v, want a stale writer error 100 < 200", err)
	}
	if err := complete(t, sink, lost); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("the run that lost its slot completing: err = %v, want ErrStaleWriter", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM lost WHERE writer = 'lost'"); got[0] != 0 {
		t.Fatalf("the refused run left %d rows", got[0])
	}
}

// NonSlotRunBelowASlotRunsToken: a run without a slot is refused below the
// token a slot run stored, and a slot run goes on below a later run's
// token.
func NonSlotRunBelowASlotRunsToken(t *testing.T, db DB) {
	sink := raceTable(t, db, "mixed")
	slot := SlotLeased(SlotStart, 300)
	if err := sink.Write(slot, Rows("slot", 300, 1)); err != nil {
		t.Fatal(err)
	}
	var stale *fencing.StaleWriterError
	if err := sink.Write(Leased(200), Rows("low", 200, 1)); !errors.As(err, &stale) || stale.Token != 200 || stale.Stored != 300 {
		t.Fatalf("a run without a slot below the slot run's token: err = %v, want a stale writer error 200 < 300", err)
	}
	if err := sink.Write(Leased(400), Rows("high", 400, 1)); err != nil {
		t.Fatalf("a run without a slot above it: %v", err)
	}
	if err := sink.Write(slot, Rows("slot", 300, 1)); err != nil {
		t.Fatalf("the slot run's next batch below the newer token: %v", err)
	}
	if err := complete(t, sink, slot); err != nil {
		t.Fatal(err)
	}
	if got := db.Strings(t, "SELECT writer FROM mixed ORDER BY id"); !slices.Equal(got, []string{"slot", "high", "slot"}) {
		t.Fatalf("rows %v", got)
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'mixed'"); !slices.Equal(got, []int64{400}) {
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
	for _, err := range []error{sink.Write(older, Rows("older", 7000, 1)), complete(t, sink, older)} {
		var fe *fencing.SlotForgottenError
		if !errors.Is(err, fencing.ErrSlotForgotten) || !errors.As(err, &fe) || fe.Slot != SlotStart-60 || fe.Oldest != SlotStart || fe.Resource != "forgot" {
			t.Fatalf("a slot older than a full ledger's: err = %v, want a SlotForgottenError", err)
		}
		if errors.Is(err, runtime.ErrSlotCompleted) || errors.Is(err, fencing.ErrStaleWriter) {
			t.Fatalf("err = %v passes for a completed slot or a stale writer", err)
		}
	}
	if got := fencing.SlotForgottenRefusals() - before; got != 2 {
		t.Errorf("forgotten-slot refusals counted: %d, want 2 (a refused batch is not retried)", got)
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

// Reprocess: a reprocessing run takes over a slot a lower token completed
// (the row takes its token, not completed until it completes); a completed
// row of a higher token still refuses it, and a run that does not
// reprocess is refused by the reprocessed slot as by any completed one.
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
	if err := sink.Write(first, Rows("first", 100, 1)); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("the first run after the reprocess took over: err = %v, want ErrStaleWriter", err)
	}
	if err := complete(t, sink, re); err != nil {
		t.Fatal(err)
	}
	wantSlotDone(t, sink.Write(ReprocessLeased(SlotStart, 150), Rows("low", 150, 1)), "reproc", SlotStart, 150, 200)
	wantSlotDone(t, sink.Write(SlotLeased(SlotStart, 300), Rows("plain", 300, 1)), "reproc", SlotStart, 300, 200)

	// A reprocessing run that finds nothing to write still replaces the
	// completed slot.
	empty := ReprocessLeased(SlotStart, 400)
	if err := complete(t, sink, empty); err != nil {
		t.Fatal(err)
	}
	if got := ledger(t, db, "reproc", SlotStart); !slices.Equal(got, []int64{4001}) {
		t.Fatalf("ledger after an empty reprocess: %v, want token 400 completed", got)
	}
	if got := db.Strings(t, "SELECT writer FROM reproc ORDER BY id"); !slices.Equal(got, []string{"first", "first", "re"}) {
		t.Fatalf("rows %v", got)
	}
}
