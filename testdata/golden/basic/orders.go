// Package orders holds the order pipelines.
//
//agora:worker health_port=8080 graceful_shutdown=30s
package orders

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// OrdersPipeline copies orders.
type OrdersPipeline struct{}

// Run copies the orders of one hour.
func (*OrdersPipeline) Run(ctx context.Context) error { return nil }

// BuildOrders builds the hourly orders pipeline.
//
//agora:schedule id=orders-hourly cron="0 * * * *" backoff=30s max_errors=5
func BuildOrders(ctx context.Context) (*OrdersPipeline, error) { return &OrdersPipeline{}, nil }

// BuildConsumer builds the events consumer.
//
//agora:schedule id=events_consumer continuous
func BuildConsumer(ctx context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}
