package cli

import (
	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/postgres"
	"github.com/agora-etl/agora/etl/sqlite"
)

// Builtins returns a new registry holding every component the agora
// command ships with: etl.Builtins() and the postgres and sqlite sources
// and sinks. Add components of your own to it and pass it to Main with
// WithRegistry.
func Builtins() *etl.Registry {
	r := etl.Builtins()
	postgres.Register(r)
	sqlite.Register(r)
	return r
}
