package kafka

import (
	"context"

	"github.com/agora-etl/agora/etl"
)

// Register adds the kafka source and sink to r.
func Register(r *etl.Registry) {
	etl.RegisterSource(r, "kafka", "records of Kafka topics read through a consumer group, committed once every sink took them", func(_ context.Context, cfg SourceConfig) (etl.Source, error) {
		return NewSource(cfg)
	})
	etl.RegisterSink(r, "kafka", "records produced to a Kafka topic by an idempotent producer, acknowledged by the brokers before the source is", func(_ context.Context, cfg SinkConfig) (etl.Sink, error) {
		return NewSink(cfg)
	})
}
