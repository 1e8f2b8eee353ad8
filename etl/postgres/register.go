package postgres

import (
	"context"

	"github.com/agora-etl/agora/etl"
)

// Register adds the postgres source and sink to r.
func Register(r *etl.Registry) {
	etl.RegisterSource(r, "postgres", "rows of a PostgreSQL query, streamed in batches", func(ctx context.Context, cfg SourceConfig) (etl.Source, error) {
		pool, err := sharedPool(ctx, cfg.URL)
		if err != nil {
			return nil, err
		}
		return NewSource(pool, cfg)
	})
	etl.RegisterSink(r, "postgres", "rows into a PostgreSQL table, each batch one transaction fenced by the run's token", func(ctx context.Context, cfg SinkConfig) (etl.Sink, error) {
		pool, err := sharedPool(ctx, cfg.URL)
		if err != nil {
			return nil, err
		}
		return NewSink(pool, cfg)
	})
}
