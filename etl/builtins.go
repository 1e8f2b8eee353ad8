package etl

import (
	"context"
	"os"
)

// Builtins returns a new registry holding the built-in components:
//
//	sources: iterable, file, redis_stream
//	sinks:   stdout, file, redis_stream
//
// Each call returns a fresh registry, which a program may extend with its
// own components or overrides.
//
// This is the light set: etl is what user Go code and generated workers
// import, so it brings no database driver or Kafka client. The complete
// registry, with the kafka, postgres and sqlite components from etl's
// subpackages, is config.DefaultRegistry, which config files and the agora
// command use by default.
func Builtins() *Registry {
	r := NewRegistry()
	RegisterSource(r, "iterable", "records written inline in the configuration",
		func(_ context.Context, cfg IterableSourceConfig) (Source, error) {
			return newIterableFromConfig(cfg), nil
		})
	RegisterSource(r, "file", "JSON lines or CSV files matched by a glob, each read once",
		func(ctx context.Context, cfg FileSourceConfig) (Source, error) {
			if st, ok := ReadStateFromContext(ctx); ok {
				return NewFileSource(cfg, WithReadState(st))
			}
			return NewFileSource(cfg)
		})
	RegisterSource(r, "redis_stream", "a Redis stream read through a consumer group, at least once",
		func(_ context.Context, cfg RedisStreamSourceConfig) (Source, error) {
			return NewRedisStreamSource(cfg)
		})
	RegisterSink(r, "stdout", "one JSON object a line on standard output",
		func(_ context.Context, _ StdoutSinkConfig) (Sink, error) {
			return NewStdoutSink(os.Stdout), nil
		})
	RegisterSink(r, "file", "appends JSON lines or CSV rows to a file, fsynced before success",
		func(_ context.Context, cfg FileSinkConfig) (Sink, error) {
			return NewFileSink(cfg)
		})
	RegisterSink(r, "redis_stream", "adds each record to a Redis stream as one JSON entry",
		func(_ context.Context, cfg RedisStreamSinkConfig) (Sink, error) {
			return NewRedisStreamSink(cfg)
		})
	return r
}
