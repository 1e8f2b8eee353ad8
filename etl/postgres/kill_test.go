package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl/internal/sinktest"
)

const killRows = 5000

// A worker SIGKILLed inside its write transaction leaves nothing of the
// batch and no stored token; the retry (a new lease, a newer token) lands
// the batch once, and landing it again changes nothing.
func TestWriterKilledMidTransaction(t *testing.T) {
	if url, ok := sinktest.ChildArg(); ok {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		sink, err := NewSink(pool, SinkConfig{Table: "k", Mode: "upsert", Key: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		sink.beforeCommit = sinktest.StopInTransaction
		t.Fatal(sink.Write(sinktest.Leased(50), sinktest.KillRows(killRows)))
	}
	pool, url := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE k (id bigint PRIMARY KEY, v text NOT NULL)")
	sinktest.KillWriterMidTransaction(t, "TestWriterKilledMidTransaction", url)

	if got := db.Ints(t, "SELECT count(*) FROM k"); got[0] != 0 {
		t.Fatalf("%d rows of the killed writer's batch are visible", got[0])
	}
	if got := db.Ints(t, "SELECT count(*) FROM agora_fencing WHERE token = 50"); got[0] != 0 {
		t.Fatal("the killed writer's token was stored")
	}
	sink, err := NewSink(pool, SinkConfig{Table: "k", Mode: "upsert", Key: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the retry, and a retry of the retry
		if err := sink.Write(sinktest.Leased(51), sinktest.KillRows(killRows)); err != nil {
			t.Fatal(err)
		}
		got := db.Ints(t, "SELECT count(*) FROM k UNION ALL SELECT count(DISTINCT id) FROM k UNION ALL SELECT count(*) FROM k WHERE v = 'v' || id")
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
	newSink := func(pool *pgxpool.Pool) *Sink {
		sink, err := NewSink(pool, SinkConfig{Table: "ks", Mode: "upsert", Key: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		return sink
	}
	if url, ok := sinktest.ChildArg(); ok {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		sink := newSink(pool)
		t.Fatal(sinktest.WriteKilledSlotRun(sink, func() { sink.beforeCommit = sinktest.StopInTransaction }, n))
	}
	pool, url := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE ks (id bigint PRIMARY KEY, v text NOT NULL)")
	sinktest.KillWriterMidTransaction(t, "TestSlotRunKilledAfterItsFirstBatch", url)
	sinktest.CheckKilledSlotRun(t, db, newSink(pool), "ks", n)
}
