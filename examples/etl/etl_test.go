package etl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/runtime"
)

// TestMain points the package's shared warehouse at a file of this test
// run, so no earlier run's tokens are in it.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "etl-example-")
	if err != nil {
		panic(err)
	}
	os.Setenv(WarehouseEnv, filepath.Join(dir, "warehouse.db"))
	code := m.Run()
	shared.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func leased(token, run int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "t", FencingToken: token, RunNumber: run})
}

func rows(t *testing.T, w *Warehouse, table string) int64 {
	t.Helper()
	n, err := w.Rows(table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWarehouseRejectsStaleWriters(t *testing.T) {
	w := NewWarehouse(filepath.Join(t.TempDir(), "w.db"))
	defer w.Close()
	if err := w.Load(leased(5, 1), "orders", 10); err != nil {
		t.Fatal(err)
	}
	if err := w.Load(leased(4, 1), "orders", 10); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("stale token: err = %v, want fencing.ErrStaleWriter", err)
	}
	if err := w.Load(leased(6, 2), "orders", 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Load(context.Background(), "orders", 1); err != nil {
		t.Fatalf("an unfenced local run must load: %v", err)
	}
	if got := rows(t, w, "orders"); got != 12 {
		t.Fatalf("rows = %d, want 12", got)
	}
	// The file is the state: a second handle on it refuses the stale
	// token too.
	again := NewWarehouse(w.Path())
	defer again.Close()
	if err := again.Load(leased(5, 3), "orders", 1); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("stale token through a second handle: %v", err)
	}
}

func TestPipelinesLoadTheWarehouse(t *testing.T) {
	ctx := leased(1, time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC).Unix())
	migrate, _ := BuildSchemaMigrate(ctx)
	rollup, _ := BuildOrdersRollup(ctx)
	inventory, _ := BuildInventorySync(ctx)
	events, _ := BuildEventsConsumer(ctx)
	events.pause = time.Millisecond
	if err := migrate.Run(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	// The pipelines load the package's shared warehouse, which earlier runs
	// of this test (go test -count=N) have loaded too: count what this run adds.
	rollupBefore, eventsBefore := rows(t, shared, "orders_rollup"), rows(t, shared, "events")
	for name, p := range map[string]runtime.Pipeline{"rollup": rollup, "inventory": inventory, "events": events} {
		if err := p.Run(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	rollupRows, eventRows := rows(t, shared, "orders_rollup")-rollupBefore, rows(t, shared, "events")-eventsBefore
	if rollupRows < 5 || eventRows != 400 {
		t.Fatalf("rows loaded: rollup %d, events %d; want at least 5 and exactly 400", rollupRows, eventRows)
	}
}

func TestEventsConsumerStopsAtShutdown(t *testing.T) {
	ch := make(chan struct{})
	close(ch)
	ctx := runtime.ContextWithShutdown(leased(1, 0), ch)
	w := NewWarehouse(filepath.Join(t.TempDir(), "w.db"))
	defer w.Close()
	p := &EventsConsumer{warehouse: w, batches: 1000, pause: time.Hour}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the consumer did not return when a shutdown began")
	}
}
