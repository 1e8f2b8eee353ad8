package kafka

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agora-etl/agora/etl"
)

// ValueField is the field a message whose value is not a JSON object is
// put in, as a string: {"value": "<the text>"}, so it still goes through
// instead of stopping the partition.
const ValueField = "value"

// decodeValue turns a message value into a record: a JSON object becomes
// that object (numbers kept exactly, as json.Number), anything else
// {"value": text}.
func decodeValue(v []byte) etl.Record {
	if t := bytes.TrimLeft(v, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var rec etl.Record
		if err := dec.Decode(&rec); err == nil && rec != nil && !dec.More() {
			return rec
		}
	}
	return etl.Record{ValueField: string(v)}
}

// encoder writes records as JSON objects, keys sorted, without HTML
// escaping (what the other sinks write).
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// value returns rec as JSON, in a new slice.
func (e *encoder) value(rec etl.Record) ([]byte, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	if err := e.enc.Encode(rec); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))), nil
}

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
