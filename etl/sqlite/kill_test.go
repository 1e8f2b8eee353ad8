package sqlite

import (
	"database/sql"
	"testing"

	"github.com/agora-etl/agora/etl/internal/sinktest"
)

const killRows = 5000

// A worker SIGKILLed inside its write transaction leaves nothing of the
// batch and no stored token; the retry lands the batch once.
func TestWriterKilledMidTransaction(t *testing.T) {
	if path, ok := sinktest.ChildArg(); ok {
		db, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sink, err := NewSink(db, SinkConfig{Table: "k", Mode: "upsert", Key: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		sink.beforeCommit = sinktest.StopInTransaction
		t.Fatal(sink.Write(sinktest.Leased(50), sinktest.KillRows(killRows)))
	}
	db, path := testDB(t)
	sdb := suiteDB(t, db)
	sdb.Exec(t, "CREATE TABLE k (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
	sinktest.KillWriterMidTransaction(t, "TestWriterKilledMidTransaction", path)

	if got := sdb.Ints(t, "SELECT count(*) FROM k"); got[0] != 0 {
		t.Fatalf("%d rows of the killed writer's batch are visible", got[0])
	}
	if got := sdb.Ints(t, "SELECT count(*) FROM agora_fencing WHERE token = 50"); got[0] != 0 {
		t.Fatal("the killed writer's token was stored")
	}
	sink, err := NewSink(db, SinkConfig{Table: "k", Mode: "upsert", Key: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := sink.Write(sinktest.Leased(51), sinktest.KillRows(killRows)); err != nil {
			t.Fatal(err)
		}
		got := sdb.Ints(t, "SELECT count(*) FROM k UNION ALL SELECT count(DISTINCT id) FROM k UNION ALL SELECT count(*) FROM k WHERE v = 'v' || id")
		if got[0] != killRows || got[1] != killRows || got[2] != killRows {
			t.Fatalf("after the retry: %d rows, %d ids, %d intact; want %d each", got[0], got[1], got[2], killRows)
		}
	}
}

// A slot run SIGKILLed after its first batch leaves that batch and an
// uncompleted ledger row; the re-run with a higher token takes the slot
// over and completes it.
func TestSlotRunKilledAfterItsFirstBatch(t *testing.T) {
	const n = 1000
	newSink := func(db *sql.DB) *Sink {
		sink, err := NewSink(db, SinkConfig{Table: "ks", Mode: "upsert", Key: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		return sink
	}
	if path, ok := sinktest.ChildArg(); ok {
		db, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sink := newSink(db)
		t.Fatal(sinktest.WriteKilledSlotRun(sink, func() { sink.beforeCommit = sinktest.StopInTransaction }, n))
	}
	db, path := testDB(t)
	sdb := suiteDB(t, db)
	sdb.Exec(t, "CREATE TABLE ks (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
	sinktest.KillWriterMidTransaction(t, "TestSlotRunKilledAfterItsFirstBatch", path)
	sinktest.CheckKilledSlotRun(t, sdb, newSink(db), "ks", n)
}
