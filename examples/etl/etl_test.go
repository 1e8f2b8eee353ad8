package etl

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func leased(token, run int64) context.Context {
	return runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "t", FencingToken: token, RunNumber: run})
}

func TestWarehouseRejectsStaleWriters(t *testing.T) {
	w := NewWarehouse()
	if err := w.Load(leased(5, 1), "orders", 10); err != nil {
		t.Fatal(err)
	}
	if err := w.Load(leased(4, 1), "orders", 10); !errors.Is(err, ErrStaleWriter) {
		t.Fatalf("stale token: err = %v, want ErrStaleWriter", err)
	}
	if err := w.Load(leased(6, 2), "orders", 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Load(context.Background(), "orders", 1); err != nil {
		t.Fatalf("an unfenced local run must load: %v", err)
	}
	if got := w.Rows("orders"); got != 12 {
		t.Fatalf("rows = %d, want 12", got)
	}
}

func TestPipelinesLoadTheWarehouse(t *testing.T) {
	ctx := leased(1, time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC).Unix())
	migrate, _ := BuildSchemaMigrate(ctx)
	rollup, _ := BuildOrdersRollup(ctx)
	inventory, _ := BuildInventorySync(ctx)
	events, _ := BuildEventsConsumer(ctx)
	events.pause = time.Millisecond
	// The pipelines load the package's shared warehouse, which earlier runs
	// of this test (go test -count=N) have loaded too: count what this run adds.
	rollupBefore, eventsBefore := shared.Rows("orders_rollup"), shared.Rows("events")
	for name, p := range map[string]runtime.Pipeline{"migrate": migrate, "rollup": rollup, "inventory": inventory, "events": events} {
		if err := p.Run(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	rollupRows, eventRows := shared.Rows("orders_rollup")-rollupBefore, shared.Rows("events")-eventsBefore
	if rollupRows < 5 || eventRows != 400 {
		t.Fatalf("rows loaded: rollup %d, events %d; want at least 5 and exactly 400", rollupRows, eventRows)
	}
}

func TestEventsConsumerStopsAtShutdown(t *testing.T) {
	ch := make(chan struct{})
	close(ch)
	ctx := runtime.ContextWithShutdown(leased(1, 0), ch)
	p := &EventsConsumer{warehouse: NewWarehouse(), batches: 1000, pause: time.Hour}
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
