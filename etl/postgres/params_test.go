package postgres

import (
	"fmt"
	"testing"

	"github.com/agora-etl/agora/etl/internal/sinktest"
	"github.com/agora-etl/agora/runtime"
)

// TestSourceBindsRunParams: a :param_<name> is bound as text, which
// PostgreSQL reads as whatever type the query gives it (a date here).
func TestSourceBindsRunParams(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE ev AS SELECT g AS id, date '2025-12-30' + g AS day FROM generate_series(1, 4) g")
	src, err := NewSource(pool, SourceConfig{Query: "SELECT id, :param_note AS note FROM ev WHERE day = :param_day ORDER BY id"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := runtime.ContextWithParams(sinktest.Slot("p", 1767225600, 7), map[string]string{"day": "2026-01-01", "note": "by hand"})
	_, recs, _ := sinktest.Drain(t, ctx, src, 10)
	if got := fmt.Sprint(recs); got != "[map[id:2 note:by hand]]" {
		t.Fatalf("records %s", got)
	}
}
