package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

// testDB opens a fresh database file in the test's temporary directory.
func testDB(t testing.TB) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func suiteDB(t testing.TB, db *sql.DB) sinktest.DB {
	return sinktest.DB{
		NewSink: func(t testing.TB, c sinktest.Config) etl.Sink {
			s, err := NewSink(db, SinkConfig{Table: c.Table, Columns: c.Columns, Mode: c.Mode, Key: c.Key,
				Resource: c.Resource, CreateTable: c.CreateTable, AllowUnfenced: c.AllowUnfenced, OnUnknownField: c.OnUnknownField,
				SlotColumn: c.SlotColumn})
			if err != nil {
				t.Fatal(err)
			}
			s.cols.Now = c.Now
			return s
		},
		Exec: func(t testing.TB, q string) {
			t.Helper()
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
		Ints:    func(t testing.TB, q string) []int64 { return query[int64](t, db, q) },
		Strings: func(t testing.TB, q string) []string { return query[string](t, db, q) },
		AutoID:  "INTEGER PRIMARY KEY AUTOINCREMENT",
		FencedTx: func(ctx context.Context, resource string, token, v int64, opts ...fencing.TxOption) error {
			return FencedTx(ctx, db, resource, token, func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, "INSERT INTO "+resource+" (v) VALUES (?)", v); err != nil {
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
			return CompleteSlot(ctx, db, resource, token)
		},
	}
}

func query[T any](t testing.TB, db *sql.DB, q string) []T {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func TestSinkSuite(t *testing.T) {
	db, _ := testDB(t)
	sinktest.Run(t, suiteDB(t, db))
}

func TestSinkConfigValidate(t *testing.T) {
	cases := map[string]struct {
		cfg  SinkConfig
		keys []string
	}{
		"empty":            {SinkConfig{}, []string{"path", "table"}},
		"bad mode":         {SinkConfig{Path: "x", Table: "t", Mode: "merge"}, []string{"mode"}},
		"upsert no key":    {SinkConfig{Path: "x", Table: "t", Mode: "upsert"}, []string{"key"}},
		"key not a column": {SinkConfig{Path: "x", Table: "t", Mode: "upsert", Key: []string{"id"}, Columns: []string{"name"}}, []string{"key"}},
		"key with insert":  {SinkConfig{Path: "x", Table: "t", Key: []string{"id"}}, []string{"key"}},
		"twice":            {SinkConfig{Path: "x", Table: "t", Columns: []string{"a", "a"}}, []string{"columns"}},
		"ok":               {SinkConfig{Path: "x", Table: "t", Mode: "upsert", Key: []string{"id"}}, nil},
		"replace":          {SinkConfig{Path: "x", Table: "t", Mode: "replace", SlotColumn: "slot"}, nil},
		"replace no slot":  {SinkConfig{Path: "x", Table: "t", Mode: "replace"}, []string{"slot_column"}},
		"replace with key": {SinkConfig{Path: "x", Table: "t", Mode: "replace", SlotColumn: "slot", Key: []string{"slot"}}, []string{"key"}},
		"slot in columns":  {SinkConfig{Path: "x", Table: "t", Mode: "replace", SlotColumn: "slot", Columns: []string{"id", "slot"}}, []string{"slot_column"}},
		"slot with upsert": {SinkConfig{Path: "x", Table: "t", Mode: "upsert", Key: []string{"id"}, SlotColumn: "slot"}, []string{"slot_column"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			sinktest.WantFieldErrors(t, c.cfg.Validate(), c.keys...)
		})
	}
}

// SQLite matches column names without regard to case; so does the check
// of unknown fields, and a schema-qualified table's columns are read from
// its schema.
func TestUnknownFieldsFoldCase(t *testing.T) {
	db, _ := testDB(t)
	if _, err := db.Exec("CREATE TABLE evt (id INTEGER PRIMARY KEY, name TEXT)"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"evt", "main.evt"} {
		sink, err := NewSink(db, SinkConfig{Table: table, AllowUnfenced: true})
		if err != nil {
			t.Fatal(err)
		}
		err = sink.Write(context.Background(), []etl.Record{{"ID": len(table), "Name": "x"}, {"id": len(table) + 10, "nope": 1}})
		var rej *etl.RejectedError
		if !errors.As(err, &rej) || len(rej.Rejections) != 1 || rej.Rejections[0].Index != 1 {
			t.Fatalf("%s: err = %v, want record 1 rejected", table, err)
		}
	}
	if got := query[string](t, db, "SELECT cast(id AS TEXT) || name FROM evt ORDER BY id"); !slices.Equal(got, []string{"3x", "8x"}) {
		t.Fatalf("rows %v", got)
	}
}
