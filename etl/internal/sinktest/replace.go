package sinktest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
)

// RunReplace runs the tests of mode = "replace" as subtests of t.
func RunReplace(t *testing.T, db DB) {
	t.Run("ReplaceSlots", func(t *testing.T) { ReplaceSlots(t, db) })
	t.Run("ReplaceNeedsASlotRun", func(t *testing.T) { ReplaceNeedsASlotRun(t, db) })
}

// replaceRows returns n records {writer, n}.
func replaceRows(writer string, n int) []etl.Record {
	recs := make([]etl.Record, n)
	for i := range recs {
		recs[i] = etl.Record{"writer": writer, "n": int64(i)}
	}
	return recs
}

// ReplaceSlots: in replace mode every row gets its run's slot time, and a
// slot run's first write of its slot, scheduled or backfill (a reprocess,
// a take-over of an interrupted run, a completion without writes),
// deletes, in the same transaction, the rows of the slot's earlier run and
// those alone; a transaction that fails keeps them.
func ReplaceSlots(t *testing.T, db DB) {
	sink := db.NewSink(t, Config{Table: "repl", Mode: "replace", SlotColumn: "slot", CreateTable: true})
	s1, s2, s3 := SlotStart, SlotStart+3600, SlotStart+7200
	write := func(ctx context.Context, writer string, n int) {
		t.Helper()
		if err := sink.Write(ctx, replaceRows(writer, n)); err != nil {
			t.Fatalf("%s: %v", writer, err)
		}
	}
	done := func(ctx context.Context) {
		t.Helper()
		if err := complete(t, sink, ctx); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(want ...string) {
		t.Helper()
		got := db.Strings(t, "SELECT writer FROM repl ORDER BY writer, n")
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
	}
	a, b := SlotLeased(s1, 100), BackfillLeased(s2, 200)
	write(a, "a", 3)
	write(b, "b", 1) // a backfill beside the scheduled run
	write(a, "a", 2) // a's next batch keeps its first
	done(a)
	done(b)
	rows("a", "a", "a", "a", "a", "b")
	if got := db.Ints(t, "SELECT count(*) FROM repl WHERE slot = '2026-01-01T00:00:00Z'"); got[0] != 5 {
		t.Fatalf("rows with slot a's time in the slot column: %d, want 5", got[0])
	}

	// A reprocess replaces the slot's rows at its first batch.
	re := ReprocessLeased(s1, 300)
	write(re, "re", 2)
	rows("b", "re", "re")
	write(re, "re", 1)
	done(re)
	rows("b", "re", "re", "re")

	// A transaction that fails after the delete keeps the rows.
	failing, cancel := context.WithCancel(ReprocessLeased(s1, 400))
	db.BeforeCommit(sink, cancel)
	if err := sink.Write(failing, replaceRows("failed", 4)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a write whose transaction fails: err = %v, want context.Canceled", err)
	}
	db.BeforeCommit(sink, nil)
	rows("b", "re", "re", "re")
	if got := ledger(t, db, "repl", s1); !slices.Equal(got, []int64{3001}) {
		t.Fatalf("ledger after the failed transaction: %v, want token 300 completed", got)
	}

	// A scheduled run's take-over of an interrupted run replaces its rows;
	// the interrupted run is then refused.
	dead, rerun := SlotLeased(s3, 500), SlotLeased(s3, 600)
	write(dead, "dead", 2)
	write(rerun, "rerun", 1)
	rows("b", "re", "re", "re", "rerun")
	if err := sink.Write(dead, replaceRows("dead", 1)); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("the interrupted run after the take-over: err = %v, want ErrStaleWriter", err)
	}
	done(rerun)

	// A reprocess that finds nothing replaces the slot's rows with none.
	done(ReprocessLeased(s2, 700))
	rows("re", "re", "re", "rerun")

	// A run of a completed slot that does not reprocess deletes nothing.
	wantSlotDone(t, sink.Write(SlotLeased(s1, 800), replaceRows("late", 1)), "repl", s1, 800, 300)
	wantSlotDone(t, complete(t, sink, SlotLeased(s3, 800)), "repl", s3, 800, 600)
	rows("re", "re", "re", "rerun")
}

// ReplaceNeedsASlotRun: replace mode refuses runs without a slot (at
// Open, Write and Complete) and records that carry the slot column, with
// errors that say so.
func ReplaceNeedsASlotRun(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE repl_no (writer text, n bigint, slot text)")
	sink := db.NewSink(t, Config{Table: "repl_no", Mode: "replace", SlotColumn: "slot"})
	for _, err := range []error{
		sink.Write(Leased(100), replaceRows("x", 1)),
		sink.(etl.Opener).Open(Leased(100)),
		complete(t, sink, Leased(100)),
	} {
		if err == nil || !strings.Contains(err.Error(), `mode = "replace" needs a slot run`) || !strings.Contains(err.Error(), "repl_no") {
			t.Fatalf("a run without a slot: err = %v", err)
		}
	}
	err := sink.Write(SlotLeased(SlotStart, 100), []etl.Record{{"writer": "x", "n": 1}, {"writer": "y", "slot": "2020-01-01T00:00:00Z"}})
	if err == nil || !strings.Contains(err.Error(), `record 2 of the batch has a field "slot"`) {
		t.Fatalf("a record with the slot column's field: err = %v", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM repl_no"); got[0] != 0 {
		t.Fatalf("refused writes left %d rows", got[0])
	}
	if r, ok := sink.(etl.SlotReplacer); !ok || !r.ReplacesSlots() {
		t.Fatalf("%T does not report that it replaces slots", sink)
	}
}
