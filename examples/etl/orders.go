package etl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Order is one order of the shop.
type Order struct {
	ID     int64
	Amount int64 // cents
	At     time.Time
}

// OrderSource lists the orders placed in a time window.
type OrderSource interface {
	Orders(ctx context.Context, from, to time.Time) ([]Order, error)
}

// fakeShop stands in for the shop's database: a steady trickle of orders.
type fakeShop struct{}

func (fakeShop) Orders(ctx context.Context, from, to time.Time) ([]Order, error) {
	r := rand.New(rand.NewPCG(uint64(from.Unix()), uint64(to.Unix())))
	n := 5 + r.IntN(20)
	orders := make([]Order, n)
	for i := range orders {
		orders[i] = Order{ID: from.Unix()*100 + int64(i), Amount: 100 + r.Int64N(10_000), At: from}
	}
	return orders, nil
}

// OrdersRollup sums the orders of one window into the warehouse.
type OrdersRollup struct {
	source    OrderSource
	warehouse *Warehouse
	window    time.Duration
}

// Run extracts the orders of the window that ended at the run's slot,
// totals them and loads the total.
func (p *OrdersRollup) Run(ctx context.Context) error {
	lease, _ := runtime.LeaseFromContext(ctx)
	end := time.Unix(lease.RunNumber, 0)
	if lease.RunNumber <= 0 {
		end = time.Now().Truncate(p.window)
	}
	orders, err := p.source.Orders(ctx, end.Add(-p.window), end)
	if err != nil {
		return fmt.Errorf("extract orders: %w", err)
	}
	var total int64
	for _, o := range orders {
		total += o.Amount
	}
	if err := p.warehouse.Load(ctx, "orders_rollup", int64(len(orders))); err != nil {
		return fmt.Errorf("load rollup: %w", err)
	}
	logRun(ctx, PipelineOrdersRollup, int64(len(orders)))
	return nil
}

// BuildOrdersRollup builds the rollup of the orders of the last ten seconds.
//
//agora:schedule id=orders-rollup cron="*/10 * * * * *" backoff=5s max_errors=5
func BuildOrdersRollup(ctx context.Context) (*OrdersRollup, error) {
	return &OrdersRollup{source: fakeShop{}, warehouse: shared, window: 10 * time.Second}, nil
}
