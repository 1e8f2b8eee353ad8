package etl

import (
	"context"
	"fmt"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// EventsConsumer drains the click-stream queue in batches. A run consumes
// batches for a while and returns, so the lease passes around the fleet; it
// finishes its current batch when a shutdown begins.
type EventsConsumer struct {
	warehouse *Warehouse
	batches   int
	pause     time.Duration
}

// Run consumes up to p.batches batches.
func (p *EventsConsumer) Run(ctx context.Context) error {
	var rows int64
	for range p.batches {
		select {
		case <-runtime.ShutdownRequested(ctx):
			logRun(ctx, PipelineEventsConsumer, rows)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(p.pause):
		}
		const batch = 100
		if err := p.warehouse.Load(ctx, "events", batch); err != nil {
			return fmt.Errorf("load events: %w", err)
		}
		rows += batch
	}
	logRun(ctx, PipelineEventsConsumer, rows)
	return nil
}

// BuildEventsConsumer builds the consumer.
//
//agora:schedule id=events-consumer continuous backoff=1s
func BuildEventsConsumer(ctx context.Context) (*EventsConsumer, error) {
	return &EventsConsumer{warehouse: shared, batches: 4, pause: 500 * time.Millisecond}, nil
}
