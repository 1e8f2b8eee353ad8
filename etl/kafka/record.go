package kafka

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agora-etl/agora/etl"
)

// ValueField is the field a message whose value is not a JSON object is
// put in, as a string: {"value": "<the text>"}, so it still goes through
// instead of stopping the partition.
const ValueField = "value"

// decoder turns message values into records: a JSON object becomes that
// object (numbers kept exactly, as json.Number), anything else
// {"value": text}.
type decoder struct{ json etl.JSONDecoder }

func (d *decoder) record(v []byte) etl.Record {
	s := string(v)
	if t := strings.TrimLeft(s, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		if rec, ok := d.json.DecodeObject(t); ok {
			return rec
		}
	}
	return etl.Record{ValueField: s}
}

// decodeValue is record with a decoder of its own.
func decodeValue(v []byte) etl.Record {
	var d decoder
	return d.record(v)
}

// encoder writes records as JSON objects, keys sorted, without HTML
// escaping (what the other sinks write), into one buffer a batch.
type encoder struct{ json etl.JSONEncoder }

// reset starts a new batch; the values of the last one must be unused.
func (e *encoder) reset() { e.json.Reset() }

// value returns rec as JSON, valid until the next reset.
func (e *encoder) value(rec etl.Record) ([]byte, error) { return e.json.Encode(rec) }

// key returns the message key for a field's value: a string as it is,
// json.Number as its text, anything else as JSON. Null is an error.
func (e *encoder) key(field string, rec etl.Record) ([]byte, error) {
	v, ok := rec[field]
	switch k := v.(type) {
	case nil:
		if !ok {
			return nil, fmt.Errorf("kafka: record has no key field %q", field)
		}
		return nil, fmt.Errorf("kafka: key field %q is null", field)
	case string:
		return []byte(k), nil
	case json.Number:
		return []byte(k), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("kafka: key field %q: %w", field, err)
	}
	return b, nil
}
