package postgres

import (
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

func TestSlotLedger(t *testing.T) {
	pool, _ := testPool(t)
	sinktest.RunSlots(t, suiteDB(pool, defaultUpsertPath))
}

func TestSlotLedgerMigration(t *testing.T) {
	pool, _ := testPool(t)
	sinktest.Migration(t, suiteDB(pool, defaultUpsertPath))
}

// The sink counts slot-done refusals apart from stale ones.
func TestSinkStatsCountSlotDone(t *testing.T) {
	pool, _ := testPool(t)
	sdb := suiteDB(pool, defaultUpsertPath)
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

// BenchmarkSlotLedgerRun measures what the ledger adds to a run: two
// batches of 10 rows and the completion, as a slot run and as a run
// without a slot (the token rule alone).
func BenchmarkSlotLedgerRun(b *testing.B) {
	pool, _ := testPool(b)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(b, "CREATE TABLE lb (id bigint, v text)")
	sink := db.NewSink(b, sinktest.Config{Table: "lb", Columns: []string{"id", "v"}}).(*Sink)
	recs := sinktest.KillRows(10)
	token := int64(0)
	for _, slot := range []bool{false, true} {
		b.Run(map[bool]string{false: "token-only", true: "slot"}[slot], func(b *testing.B) {
			for range b.N {
				token++ // a new run, and for slot runs a new slot
				ctx := sinktest.Leased(token)
				if slot {
					ctx = sinktest.SlotLeased(sinktest.SlotStart+token*60, token)
				}
				for range 2 {
					if err := sink.Write(ctx, recs); err != nil {
						b.Fatal(err)
					}
				}
				if err := sink.Complete(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFencedBatches: what fencing and the slot ledger cost a batch
// (sinktest.BenchFencedBatches).
func BenchmarkFencedBatches(b *testing.B) {
	pool, _ := testPool(b)
	sinktest.BenchFencedBatches(b, suiteDB(pool, defaultUpsertPath))
}
