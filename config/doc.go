// Package config loads agora/v1 files: the TOML that describes a
// config-only worker (`agora worker --config pipelines.toml`).
//
// Load reads and checks a whole file before anything starts. Every problem
// — an unknown key at any level, inside component tables too (checked
// against the component's configuration struct), a value of the wrong type,
// an unknown component type, a bad schedule, a missing environment variable
// — is a Diagnostic at the file, line and column it concerns, and all of them
// come back together as one Diagnostics error:
//
//	f, err := config.Load("pipelines.toml") // components: DefaultRegistry()
//	if err != nil {
//		return err // pipelines.toml:12:1: pipelines.orders.schedule: unknown key "minute" (did you mean "minutes"?)
//	}
//	pool, err := f.Pool()
//
// WithRegistry gives a program's own components instead.
//
// String values may refer to the environment as ${VAR} or ${VAR:-default};
// $$ is a literal $. Values that look like URLs with passwords are redacted
// wherever the package prints them (Summary, errors); see Redact.
package config
