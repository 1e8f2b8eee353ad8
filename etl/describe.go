package etl

// Describer is implemented by component configurations (the pointer
// ComponentSpec.NewConfig returns) that have settings worth showing beside
// their type in `agora check`'s summary: the postgres and sqlite sinks
// give their table, mode and, for upsert, key. Describe returns them as
// "key=value" pairs, in the order to show them, never with a secret.
type Describer interface {
	Describe() []string
}
