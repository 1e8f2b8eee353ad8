package etl

// Record is one item a pipeline moves: the fields of a JSON object. Values
// are what encoding/json produces (string, float64 or json.Number, bool,
// nil, []any, map[string]any) or what a source puts there (int64 and
// time.Time from databases, for example); sinks encode whatever they get.
type Record map[string]any
