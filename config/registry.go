package config

import "github.com/agora-etl/agora/etl"

// DefaultRegistry returns the components a file may name when Load is not
// given WithRegistry: etl.Builtins().
func DefaultRegistry() *etl.Registry {
	return etl.Builtins()
}
