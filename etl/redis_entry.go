package etl

import (
	"encoding/json"
	"io"
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

// entryDecoder turns stream entries into records: with recordDecoder, or
// else one json.Decoder fed entry after entry.
type entryDecoder struct {
	fast recordDecoder
	feed stringFeed
	dec  *json.Decoder // for what fast declines
}

// record turns an entry's fields into a record.
func (d *entryDecoder) record(values map[string]any) Record {
	if len(values) == 1 {
		if s, ok := values[StreamDataField].(string); ok {
			if rec, ok := d.object(s); ok {
				return rec
			}
		}
	}
	return Record(values)
}

func (d *entryDecoder) object(s string) (Record, bool) {
	if len(s) == 0 || s[0] != '{' {
		return nil, false
	}
	if rec, ok := d.fast.decode(s); ok {
		return rec, true
	}
	if d.dec == nil {
		d.dec = json.NewDecoder(&d.feed)
		d.dec.UseNumber()
	}
	d.feed.s = s
	var rec Record
	err := d.dec.Decode(&rec)
	if err != nil || rec == nil || d.feed.s != "" || d.dec.More() {
		// Not exactly one object: start afresh, since a decoder keeps its
		// error and any unread input.
		d.dec, d.feed.s = nil, ""
		return nil, false
	}
	return rec, true
}

// stringFeed is an io.Reader over one string at a time, never at EOF until
// it is empty.
type stringFeed struct{ s string }

func (f *stringFeed) Read(p []byte) (int, error) {
	if f.s == "" {
		return 0, io.EOF
	}
	n := copy(p, f.s)
	f.s = f.s[n:]
	return n, nil
}

// entryEncoder encodes records as StreamDataField values into one buffer a
// batch, so a batch costs one growing allocation, not one a record.
type entryEncoder struct {
	arena arenaWriter
	fast  recordEncoder
	enc   *json.Encoder // for what fast declines
}

// reset starts a new batch; values of the previous batch must be unused.
func (e *entryEncoder) reset() {
	e.arena.b = e.arena.b[:0]
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.arena)
		e.enc.SetEscapeHTML(false)
	}
}

// value encodes rec; the slice stays valid until the next reset.
func (e *entryEncoder) value(rec Record) ([]byte, error) {
	start := len(e.arena.b)
	if b, ok := e.fast.appendRecord(e.arena.b, rec); ok {
		e.arena.b = b
		end := len(b) - 1
		return b[start:end:end], nil
	}
	if err := e.enc.Encode(rec); err != nil {
		e.arena.b = e.arena.b[:start]
		return nil, encodeError(rec, err)
	}
	end := len(e.arena.b) - 1 // without Encode's newline
	return e.arena.b[start:end:end], nil
}

// arenaWriter appends to b. When b grows, slices handed out earlier keep
// the old array, which stays valid.
type arenaWriter struct{ b []byte }

func (w *arenaWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
