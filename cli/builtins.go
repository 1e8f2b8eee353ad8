package cli

import "github.com/agora-etl/agora/etl"

// Builtins returns a new registry holding every component the agora
// command ships with. Add components of your own to it and pass it to Main
// with WithRegistry.
func Builtins() *etl.Registry {
	return etl.Builtins()
}
