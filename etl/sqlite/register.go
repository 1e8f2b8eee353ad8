package sqlite

import (
	"context"

	"github.com/agora-etl/agora/etl"
)

// Register adds the sqlite source and sink to r.
func Register(r *etl.Registry) {
	etl.RegisterSource(r, "sqlite", "rows of a SQLite query, streamed in batches", func(ctx context.Context, cfg SourceConfig) (etl.Source, error) {
		db, err := openShared(cfg.Path)
		if err != nil {
			return nil, err
		}
		return NewSource(db, cfg)
	})
	etl.RegisterSink(r, "sqlite", "rows into a SQLite table, each batch one transaction fenced by the run's token", func(ctx context.Context, cfg SinkConfig) (etl.Sink, error) {
		db, err := openShared(cfg.Path)
		if err != nil {
			return nil, err
		}
		return NewSink(db, cfg)
	})
}
