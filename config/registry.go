package config

import (
	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/kafka"
	"github.com/agora-etl/agora/etl/postgres"
	"github.com/agora-etl/agora/etl/sqlite"
)

// DefaultRegistry returns a new registry holding every built-in component:
// etl.Builtins() (iterable, file, redis_stream, stdout) and the kafka,
// postgres and sqlite sources and sinks. It is what a file may name when
// Load is not given WithRegistry, and what the agora command uses; add
// components of your own to it and pass it with WithRegistry.
//
// The complete registry lives here rather than in etl on purpose: etl is
// what user Go code and generated workers import, and stays light, while
// the Kafka client and the PostgreSQL and SQLite drivers are heavy and live
// in their own packages, which config, already the config-only way in,
// imports.
func DefaultRegistry() *etl.Registry {
	r := etl.Builtins()
	kafka.Register(r)
	postgres.Register(r)
	sqlite.Register(r)
	return r
}
