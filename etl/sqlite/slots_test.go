package sqlite

import (
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

func TestSlotLedger(t *testing.T) {
	db, _ := testDB(t)
	sinktest.RunSlots(t, suiteDB(t, db))
}

func TestSlotLedgerMigration(t *testing.T) {
	db, _ := testDB(t)
	sinktest.Migration(t, suiteDB(t, db))
}

// The sink counts slot-done refusals apart from stale ones.
func TestSinkStatsCountSlotDone(t *testing.T) {
	db, _ := testDB(t)
	sdb := suiteDB(t, db)
	sdb.Exec(t, "CREATE TABLE st (id bigint)")
	sink := sdb.NewSink(t, sinktest.Config{Table: "st", Columns: []string{"id"}}).(*Sink)
	first := sinktest.SlotLeased(sinktest.SlotStart, 10)
	if err := sink.Write(first, []etl.Record{{"id": 1}}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Complete(first); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(sinktest.SlotLeased(sinktest.SlotStart, 20), []etl.Record{{"id": 2}}); err == nil {
		t.Fatal("a second run of a completed slot wrote")
	}
	if st := sink.Stats(); st.SlotDone != 1 || st.Refused != 0 || st.Batches != 1 {
		t.Fatalf("stats %+v, want 1 batch, 1 slot-done refusal, no stale one", st)
	}
}

// BenchmarkFencedBatches: what fencing and the slot ledger cost a batch
// (sinktest.BenchFencedBatches).
func BenchmarkFencedBatches(b *testing.B) {
	db, _ := testDB(b)
	sinktest.BenchFencedBatches(b, suiteDB(b, db))
}
