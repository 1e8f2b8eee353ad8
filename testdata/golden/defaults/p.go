// Package defaults declares pipelines without a worker directive, with
// default ids.
package defaults

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// Sync is a pipeline.
type Sync struct{}

// Run returns nil.
func (Sync) Run(context.Context) error { return nil }

// BuildOrdersHourly builds the hourly orders pipeline; its id is
// "orders-hourly".
//
//agora:schedule every=1h
func BuildOrdersHourly(context.Context) (Sync, error) { return Sync{}, nil }

// NewHTTPSync builds the HTTP sync; its id is "http-sync".
//
//agora:schedule every=90s backoff=1m30s
func NewHTTPSync(context.Context) (*Sync, error) { return &Sync{}, nil }

// migrateSchema runs once; its id is "migrate-schema".
//
//agora:schedule once max_errors=3
func migrateSchema(context.Context) (runtime.PipelineFunc, error) {
	return func(context.Context) error { return nil }, nil
}
