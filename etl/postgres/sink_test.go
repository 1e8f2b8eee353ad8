package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

func TestSinkSuiteStagedUpsert(t *testing.T) {
	pool, _ := testPool(t)
	sinktest.Run(t, suiteDB(pool, upsertStaged))
}

func TestSinkSuiteMultiRowUpsert(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, upsertMultiRow)
	t.Run("Upsert", func(t *testing.T) { sinktest.Upsert(t, db) })
	t.Run("RejectionsAndRollback", func(t *testing.T) { sinktest.RejectionsAndRollback(t, db) })
	t.Run("UnknownFields", func(t *testing.T) { sinktest.UnknownFields(t, db) })
}

// Values as JSON decoding gives them (float64, json.Number, maps) land in
// typed columns; one that does not fit its column is rejected alone.
func TestSinkWritesJSONValues(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE j (id bigint PRIMARY KEY, price numeric, meta jsonb, at timestamptz)")
	sink := db.NewSink(t, sinktest.Config{Table: "j"})
	recs := []etl.Record{
		{"id": float64(1), "price": 1.25, "meta": map[string]any{"a": 1.0}, "at": "2026-01-01T00:00:00Z"},
		{"id": json.Number("2"), "price": json.Number("3.5"), "meta": []any{"x"}},
		{"id": 3.5},                   // not an integer
		{"id": 4, "at": "not a time"}, // bad timestamp
	}
	err := sink.Write(sinktest.Leased(1), recs)
	var rej *etl.RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("err = %v, want rejections", err)
	}
	var idx []int
	for _, r := range rej.Rejections {
		idx = append(idx, r.Index)
	}
	if !slices.Equal(idx, []int{2, 3}) {
		t.Fatalf("rejected %v (%v), want [2 3]", idx, err)
	}
	if got := db.Strings(t, "SELECT id || ':' || price || ':' || meta::text FROM j ORDER BY id"); !slices.Equal(got, []string{`1:1.25:{"a": 1}`, `2:3.5:["x"]`}) {
		t.Fatalf("rows %v", got)
	}
}

func TestSinkConfigValidate(t *testing.T) {
	sinktest.WantFieldErrors(t, SinkConfig{}.Validate(), "url", "table")
	sinktest.WantFieldErrors(t, SinkConfig{URL: "postgres://x", Table: "t", Mode: "upsert"}.Validate(), "key")
	sinktest.WantFieldErrors(t, SinkConfig{URL: "postgres://x", Table: "t", Mode: "upsert", Key: []string{"id"}}.Validate())
	sinktest.WantFieldErrors(t, SinkConfig{URL: "postgres://x", Table: "t", Mode: "replace", SlotColumn: "slot"}.Validate())
	sinktest.WantFieldErrors(t, SinkConfig{URL: "postgres://x", Table: "t", Mode: "replace"}.Validate(), "slot_column")
	sinktest.WantFieldErrors(t, SinkConfig{URL: "postgres://x", Table: "t", Mode: "replace", SlotColumn: "slot", Columns: []string{"slot"}, Key: []string{"slot"}}.Validate(), "key", "slot_column")
	sinktest.WantFieldErrors(t, SinkConfig{URL: "postgres://x", Table: "t", SlotColumn: "slot"}.Validate(), "slot_column")
	if _, err := NewSink(&pgxpool.Pool{}, SinkConfig{Table: "t", Mode: "replace"}); err == nil || !strings.Contains(err.Error(), "slot_column") {
		t.Fatalf("NewSink with replace and no slot_column: %v", err)
	}
}

func TestWriteHonoursCancellation(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE c (id bigint)")
	sink := db.NewSink(t, sinktest.Config{Table: "c"})
	ctx, cancel := context.WithCancel(sinktest.Leased(1))
	cancel()
	if err := sink.Write(ctx, []etl.Record{{"id": 1}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: err = %v", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM c"); got[0] != 0 {
		t.Fatalf("cancelled write left %d rows", got[0])
	}
}
