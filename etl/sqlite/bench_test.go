package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

const benchRows = 500_000

var benchCols = []string{"id", "name", "amount", "at"}

func benchRecords() []etl.Record {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]etl.Record, benchRows)
	for i := range recs {
		recs[i] = etl.Record{"id": int64(i), "name": fmt.Sprintf("customer-%d", i), "amount": float64(i%10_000) / 100,
			"at": at.Add(time.Duration(i) * time.Second).Format(time.RFC3339)}
	}
	return recs
}

func benchTable(b *testing.B, db *sql.DB) {
	b.Helper()
	for _, q := range []string{
		"DROP TABLE IF EXISTS bench",
		"CREATE TABLE bench (id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount REAL, at TEXT)",
		"DELETE FROM agora_fencing",
	} {
		if _, err := db.Exec(q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
}

// plainInsert is the baseline: each batch in one transaction, written with
// a prepared multi-row INSERT of the same number of rows per statement as
// the sink uses, no fencing.
func plainInsert(ctx context.Context, db *sql.DB, batch []etl.Record) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	per := min(maxRowsPerStatement, maxParams/len(benchCols))
	stmts := map[int]*sql.Stmt{}
	args := make([]any, 0, per*len(benchCols))
	for start := 0; start < len(batch); start += per {
		chunk := batch[start:min(start+per, len(batch))]
		st := stmts[len(chunk)]
		if st == nil {
			ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(benchCols)), ",") + ")"
			q := "INSERT INTO bench (id, name, amount, at) VALUES " + strings.TrimSuffix(strings.Repeat(ph+",", len(chunk)), ",")
			if st, err = tx.PrepareContext(ctx, q); err != nil {
				return err
			}
			defer st.Close()
			stmts[len(chunk)] = st
		}
		args = args[:0]
		for _, r := range chunk {
			args = append(args, r["id"], r["name"], r["amount"], r["at"])
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// BenchmarkWrite writes 500 k rows into SQLite in batches with the fenced
// sink beside the plain batched INSERT baseline (each batch one
// transaction, no fencing), measured alternately in the same iterations.
// rows/s is the sink's, baseline-rows/s the baseline's, ratio the first
// over the second.
func BenchmarkWrite(b *testing.B) {
	db, _ := testDB(b)
	if err := ensureFencing(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	recs := benchRecords()
	ctx := sinktest.Leased(7)
	for _, mode := range []string{"insert", "upsert"} {
		cfg := SinkConfig{Table: "bench", Columns: benchCols, Mode: mode}
		if mode == "upsert" {
			cfg.Key = []string{"id"}
		}
		sink, err := NewSink(db, cfg)
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range []int{500, 5000} {
			b.Run(fmt.Sprintf("sink=%s/batch=%d", mode, batch), func(b *testing.B) {
				writeAll := func(write func([]etl.Record) error) time.Duration {
					b.StopTimer()
					benchTable(b, db)
					b.StartTimer()
					start := time.Now()
					for i := 0; i < len(recs); i += batch {
						if err := write(recs[i:min(i+batch, len(recs))]); err != nil {
							b.Fatal(err)
						}
					}
					return time.Since(start)
				}
				baseline := func(r []etl.Record) error { return plainInsert(ctx, db, r) }
				own := func(r []etl.Record) error { return sink.Write(ctx, r) }
				var tb, ts time.Duration
				for i := range b.N {
					if i%2 == 0 {
						tb += writeAll(baseline)
						ts += writeAll(own)
					} else {
						ts += writeAll(own)
						tb += writeAll(baseline)
					}
				}
				rows := float64(benchRows * b.N)
				b.ReportMetric(rows/ts.Seconds(), "rows/s")
				b.ReportMetric(rows/tb.Seconds(), "baseline-rows/s")
				b.ReportMetric(tb.Seconds()/ts.Seconds(), "ratio")
			})
		}
	}
}
