// Package billing must run with a shared Redis.
//
//agora:worker distributed=required graceful_shutdown=2m
package billing

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// BuildInvoices builds the invoicing pipeline.
//
//agora:schedule id=invoices cron="30 2 * * *" max_errors=10
func BuildInvoices(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}
