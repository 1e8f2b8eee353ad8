package postgres

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
	"github.com/agora-etl/agora/runtime"
)

// deadSink keeps the dead letters it is given.
type deadSink struct {
	mu   sync.Mutex
	recs []etl.Record
}

func (d *deadSink) Write(_ context.Context, recs []etl.Record) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range recs {
		d.recs = append(d.recs, maps.Clone(r))
	}
	return nil
}

// An empty CSV cell reaches a timestamptz column as "" and is dead-lettered;
// with null_if = [""] it is a NULL and the row is written. A CSV column the
// table lacks sends its rows to the dead-letter queue, not the run down.
func TestCSVNullIfIntoTimestampColumn(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE ev (id bigint PRIMARY KEY, at timestamptz)")
	dir := t.TempDir()
	csv := filepath.Join(dir, "ev.csv")
	if err := os.WriteFile(csv, []byte("id,at\n1,2026-01-01T00:00:00Z\n2,\n3,2026-01-02T00:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(nullIf []string) *deadSink {
		t.Helper()
		src, err := etl.NewFileSource(etl.FileSourceConfig{Path: csv, NullIf: nullIf, State: etl.StateNone})
		if err != nil {
			t.Fatal(err)
		}
		sink, err := NewSink(pool, SinkConfig{Table: "ev", Mode: "upsert", Key: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		dead := &deadSink{}
		ctx, counts := runtime.ContextWithRecordCounts(sinktest.Leased(int64(1 + len(nullIf))))
		if err := etl.New(src, []etl.Sink{sink}, etl.WithDLQ(dead)).Run(ctx); err != nil {
			t.Fatal(err)
		}
		if c := counts(); c.In != 3 || c.In != c.Out+c.DeadLettered+c.Filtered {
			t.Fatalf("counts %+v", c)
		}
		return dead
	}
	if dead := run(nil); len(dead.recs) != 1 || fmt.Sprint(dead.recs[0]["record"]) != "map[at: id:2]" {
		t.Fatalf("without null_if: dead letters %v, want record 2's", dead.recs)
	}
	if got := db.Ints(t, "SELECT id FROM ev ORDER BY id"); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("without null_if: rows %v", got)
	}
	if dead := run([]string{""}); len(dead.recs) != 0 {
		t.Fatalf("with null_if: dead letters %v", dead.recs)
	}
	if got := db.Ints(t, "SELECT id FROM ev WHERE at IS NULL"); !slices.Equal(got, []int64{2}) {
		t.Fatalf("with null_if: rows with a NULL at: %v, want [2]", got)
	}
}
