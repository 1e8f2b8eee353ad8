package etl

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// BuildSchemaMigrate builds the migration that creates the warehouse
// tables. It runs once across the fleet: the other replicas are told the
// run already completed and skip it.
//
//agora:schedule id=schema-migrate once max_errors=3
func BuildSchemaMigrate(ctx context.Context) (runtime.PipelineFunc, error) {
	return func(ctx context.Context) error {
		tables := []string{"orders_rollup", "inventory", "events"}
		for _, t := range tables {
			if err := shared.CreateTable(ctx, t); err != nil {
				return err
			}
		}
		logRun(ctx, PipelineSchemaMigrate, int64(len(tables)))
		return nil
	}, nil
}
