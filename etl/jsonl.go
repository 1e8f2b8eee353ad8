package etl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonlWriter encodes records as JSON lines into a buffer of whole lines.
// Keys come out sorted, HTML characters unescaped.
type jsonlWriter struct {
	w       *lineWriter
	fast    recordEncoder
	scratch bytes.Buffer  // what enc writes, before it joins the lines
	enc     *json.Encoder // for what fast declines
}

func newJSONLWriter(w io.Writer) *jsonlWriter {
	j := &jsonlWriter{w: newLineWriter(w, lineBufferSize)}
	// The slow path encodes into a scratch buffer first, so a record that
	// cannot be encoded leaves nothing behind and an encoding error is
	// never mistaken for a failed write.
	j.enc = json.NewEncoder(&j.scratch)
	j.enc.SetEscapeHTML(false)
	return j
}

// write encodes records. A record that cannot be encoded (a value JSON has
// no form for, such as NaN or a map with non-string keys) is rejected alone,
// with an error naming the field, and nothing of it written; only an error
// writing the buffer fails the whole batch.
func (j *jsonlWriter) write(records []Record) error {
	var rejections []Rejection
	for i, rec := range records {
		start := len(j.w.buf)
		if b, ok := j.fast.appendRecord(j.w.tail(), rec); ok {
			if err := j.w.commit(b, start); err != nil {
				return err
			}
			continue
		}
		j.scratch.Reset()
		if err := j.enc.Encode(rec); err != nil {
			rejections = append(rejections, Rejection{Index: i, Err: encodeError(rec, err)})
			continue
		}
		if _, err := j.w.Write(j.scratch.Bytes()); err != nil {
			return err
		}
	}
	if rejections != nil {
		return &RejectedError{Rejections: rejections}
	}
	return nil
}

// ErrUnencodable is wrapped by the rejection of a record holding a value
// JSON has no form for (NaN, ±Inf, a map with non-string keys, a channel):
// the record fails alone and is dead-lettered, the rest of its batch is
// written.
var ErrUnencodable = errors.New("etl: the record cannot be encoded as JSON")

// encodeError is the rejection reason of a record encoding/json refused:
// which field holds the value, and why.
func encodeError(rec Record, err error) error {
	if where := encodeProblem(rec); where != "" {
		return fmt.Errorf("%w: %s", ErrUnencodable, where)
	}
	return fmt.Errorf("%w: %w", ErrUnencodable, err)
}
