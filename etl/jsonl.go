package etl

import (
	"encoding/json"
	"errors"
	"io"
)

// jsonlWriter encodes records as JSON lines into a buffer of whole lines.
// Keys come out sorted, HTML characters unescaped.
type jsonlWriter struct {
	w    *lineWriter
	fast recordEncoder
	enc  *json.Encoder // for what fast declines
}

func newJSONLWriter(w io.Writer) *jsonlWriter {
	bw := newLineWriter(w, lineBufferSize)
	// Encode writes one whole line per call, which lineWriter.Write
	// takes as one commit.
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &jsonlWriter{w: bw, enc: enc}
}

// write encodes records. A record that cannot be encoded (a value JSON has
// no form for, such as NaN or a channel) is rejected and nothing of it
// written; an error writing the buffer fails the whole batch.
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
		if err := j.enc.Encode(rec); err != nil {
			if !isEncodeError(err) {
				return err
			}
			rejections = append(rejections, Rejection{Index: i, Err: err})
		}
	}
	if rejections != nil {
		return &RejectedError{Rejections: rejections}
	}
	return nil
}

// isEncodeError reports whether err is about a value rather than the
// writer.
func isEncodeError(err error) bool {
	var ut *json.UnsupportedTypeError
	var uv *json.UnsupportedValueError
	var me *json.MarshalerError
	return errors.As(err, &ut) || errors.As(err, &uv) || errors.As(err, &me)
}
