package etl

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/agora-etl/agora/runtime"
)

// InventorySync copies stock levels into the warehouse.
type InventorySync struct {
	warehouse *Warehouse
	skus      int
}

// Run copies the stock level of every SKU that changed.
func (p *InventorySync) Run(ctx context.Context) error {
	changed := int64(rand.IntN(p.skus))
	if err := p.warehouse.Load(ctx, "inventory", changed); err != nil {
		return fmt.Errorf("load inventory: %w", err)
	}
	logRun(ctx, PipelineInventorySync, changed)
	return nil
}

// BuildInventorySync builds the inventory sync; one replica of the fleet runs
// it in each five-second window.
//
//agora:schedule every=5s backoff=2s
func BuildInventorySync(ctx context.Context) (runtime.Pipeline, error) {
	return &InventorySync{warehouse: shared, skus: 500}, nil
}
