package etl

// JSONDecoder decodes JSON objects into records the way the built-in
// sources do (encoding/json with UseNumber, numbers kept as json.Number),
// several times faster: for components in other packages, such as
// etl/kafka, that read JSON. Not safe for concurrent use.
type JSONDecoder struct{ d entryDecoder }

// DecodeObject returns the record s holds when s is one JSON object,
// starting at its first byte, with nothing but blanks after it; ok is false
// otherwise. The record's strings may share s's memory.
func (d *JSONDecoder) DecodeObject(s string) (rec Record, ok bool) { return d.d.object(s) }

// JSONEncoder encodes records as JSON objects the way the built-in sinks
// do (keys sorted, no HTML escaping), into one buffer a batch. Not safe for
// concurrent use.
type JSONEncoder struct {
	e     entryEncoder
	ready bool
}

// Reset starts a new batch: slices Encode returned before are not to be
// used any more.
func (e *JSONEncoder) Reset() {
	e.e.reset()
	e.ready = true
}

// Encode returns rec as JSON, without a newline; the slice stays valid
// until the next Reset. A record encoding/json cannot encode (a NaN) is an
// error.
func (e *JSONEncoder) Encode(rec Record) ([]byte, error) {
	if !e.ready {
		e.Reset()
	}
	return e.e.value(rec)
}
