package config

import "github.com/agora-etl/agora/etl"

// DefaultRegistry returns the components a file may name when Load is not
// given WithRegistry.
//
// INTEGRATION: return etl.Builtins() once the built-in components are on
// main; until then the default registry is empty and callers pass their
// own with WithRegistry.
func DefaultRegistry() *etl.Registry {
	return etl.NewRegistry()
}
