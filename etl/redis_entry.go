package etl

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// StreamDataField is the stream entry field that carries a whole record as
// a JSON object. The redis_stream sink writes every record as one entry
// with this single field; the redis_stream source decodes an entry whose
// only field is this one, so a stream-to-stream pipeline keeps records
// exactly (numbers, nesting, types). An entry with other fields becomes a
// record of those fields, each a string; an entry whose data field is not a
// JSON object becomes {"data": "<the text>"}, so it still goes through
// instead of blocking the stream.
const StreamDataField = "data"

// entryRecord turns a stream entry's fields into a record.
func entryRecord(values map[string]any) Record {
	if len(values) == 1 {
		if s, ok := values[StreamDataField].(string); ok {
			if rec, ok := decodeObject(s); ok {
				return rec
			}
		}
	}
	return Record(values)
}

func decodeObject(s string) (Record, bool) {
	if len(s) == 0 || s[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var rec Record
	if err := dec.Decode(&rec); err != nil || rec == nil || dec.More() {
		return nil, false
	}
	return rec, true
}

// recordEntry encodes a record as the value of StreamDataField.
func recordEntry(buf *bytes.Buffer, rec Record) (string, error) {
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return "", fmt.Errorf("cannot encode as JSON: %w", err)
	}
	b := buf.Bytes()
	return string(b[:len(b)-1]), nil // without Encode's newline
}
