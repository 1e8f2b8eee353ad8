package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

const benchRows = 500_000

// benchRecords are the rows every benchmark writes, as a source hands
// them on: one record map per row.
func benchRecords() []etl.Record {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]etl.Record, benchRows)
	for i := range recs {
		recs[i] = etl.Record{"id": int64(i), "name": fmt.Sprintf("customer-%d", i), "amount": float64(i%10_000) / 100, "at": at.Add(time.Duration(i) * time.Second)}
	}
	return recs
}

var benchCols = []string{"id", "name", "amount", "at"}

func benchTable(b *testing.B, pool *pgxpool.Pool) {
	b.Helper()
	for _, q := range []string{
		"DROP TABLE IF EXISTS bench",
		"CREATE TABLE bench (id bigint PRIMARY KEY, name text NOT NULL, amount double precision, at timestamptz)",
		"DELETE FROM agora_fencing",
	} {
		if _, err := pool.Exec(context.Background(), q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
}

// recordCopy is the baseline's CopyFromSource: the same records, read
// field by field, with no fencing and no transaction of its own.
type recordCopy struct {
	recs []etl.Record
	i    int
	row  []any
}

func (c *recordCopy) Next() bool { c.i++; return c.i <= len(c.recs) }
func (c *recordCopy) Values() ([]any, error) {
	r := c.recs[c.i-1]
	for j, col := range benchCols {
		c.row[j] = r[col]
	}
	return c.row, nil
}
func (c *recordCopy) Err() error { return nil }

// BenchmarkWrite writes 500 k rows into PostgreSQL in batches with the
// fenced sink in insert mode, and 100 k in upsert mode by both upsert paths,
// each beside the plain pgx CopyFrom baseline (one COPY per batch, no
// fencing, no transaction of its own) measured in the same iterations:
// the two alternate, so load on the machine hits both alike. rows/s is
// the sink's, baseline-rows/s the baseline's, ratio the first over the
// second.
func BenchmarkWrite(b *testing.B) {
	pool, _ := testPool(b)
	if err := ensureFencing(context.Background(), pool); err != nil {
		b.Fatal(err)
	}
	recs := benchRecords()
	ctx := sinktest.Leased(7)
	baseline := func(batch []etl.Record) error {
		_, err := pool.CopyFrom(ctx, pgx.Identifier{"bench"}, benchCols, &recordCopy{recs: batch, row: make([]any, len(benchCols))})
		return err
	}
	for _, m := range []struct {
		name string
		mode string
		path upsertPath
		rows int
	}{
		{"sink=insert", "insert", defaultUpsertPath, benchRows},
		// Upserts are measured on fewer rows, to compare the two paths.
		{"sink=upsert-staged", "upsert", upsertStaged, benchRows / 5},
		{"sink=upsert-multirow", "upsert", upsertMultiRow, benchRows / 5},
	} {
		recs := recs[:m.rows]
		cfg := SinkConfig{Table: "bench", Columns: benchCols, Mode: m.mode}
		if m.mode == "upsert" {
			cfg.Key = []string{"id"}
		}
		sink, err := NewSink(pool, cfg)
		if err != nil {
			b.Fatal(err)
		}
		sink.upsertBy = m.path
		for _, batch := range []int{500, 5000} {
			b.Run(fmt.Sprintf("%s/batch=%d", m.name, batch), func(b *testing.B) {
				writeAll := func(write func([]etl.Record) error) time.Duration {
					b.StopTimer()
					benchTable(b, pool)
					b.StartTimer()
					start := time.Now()
					for i := 0; i < len(recs); i += batch {
						if err := write(recs[i:min(i+batch, len(recs))]); err != nil {
							b.Fatal(err)
						}
					}
					return time.Since(start)
				}
				var base, own time.Duration
				for i := range b.N {
					if i%2 == 0 {
						base += writeAll(baseline)
						own += writeAll(func(r []etl.Record) error { return sink.Write(ctx, r) })
					} else {
						own += writeAll(func(r []etl.Record) error { return sink.Write(ctx, r) })
						base += writeAll(baseline)
					}
				}
				rows := float64(m.rows * b.N)
				b.ReportMetric(rows/own.Seconds(), "rows/s")
				b.ReportMetric(rows/base.Seconds(), "baseline-rows/s")
				b.ReportMetric(base.Seconds()/own.Seconds(), "ratio")
			})
		}
	}
}
