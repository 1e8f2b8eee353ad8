package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/internal/sinktest"
	"github.com/agora-etl/agora/internal/pgtest"
)

// One PostgreSQL for the package's tests; each test gets a database.
func TestMain(m *testing.M) { pgtest.Main(m) }

// testPool returns a pool on a fresh database of the shared server, and
// its URL.
func testPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	url := pgtest.Shared(t).NewDatabase(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, url
}

func suiteDB(pool *pgxpool.Pool, path upsertPath) sinktest.DB {
	return sinktest.DB{
		NewSink: func(t testing.TB, c sinktest.Config) etl.Sink {
			s, err := NewSink(pool, SinkConfig{Table: c.Table, Columns: c.Columns, Mode: c.Mode, Key: c.Key,
				Resource: c.Resource, CreateTable: c.CreateTable, AllowUnfenced: c.AllowUnfenced, OnUnknownField: c.OnUnknownField,
				SlotColumn: c.SlotColumn})
			if err != nil {
				t.Fatal(err)
			}
			s.cols.Now = c.Now
			s.upsertBy = path
			return s
		},
		Exec: func(t testing.TB, q string) {
			t.Helper()
			if _, err := pool.Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
		Ints:    func(t testing.TB, q string) []int64 { return query[int64](t, pool, q) },
		Strings: func(t testing.TB, q string) []string { return query[string](t, pool, q) },
		AutoID:  "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
		FencedTx: func(ctx context.Context, resource string, token, v int64, opts ...fencing.TxOption) error {
			return FencedTx(ctx, pool, resource, token, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "INSERT INTO "+resource+" (v) VALUES ($1)", v); err != nil {
					return err
				}
				if v < 0 {
					return errors.New("sinktest: failing as asked")
				}
				return nil
			}, opts...)
		},
		BeforeCommit: func(sink etl.Sink, fn func()) { sink.(*Sink).beforeCommit = fn },
		CompleteSlot: func(ctx context.Context, resource string, token int64) error {
			return CompleteSlot(ctx, pool, resource, token)
		},
	}
}

func query[T any](t testing.TB, pool *pgxpool.Pool, q string) []T {
	t.Helper()
	rows, err := pool.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}
