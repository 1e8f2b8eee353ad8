package etl

import (
	"context"
	"fmt"
	"io"
	"os"
)

// StdoutSinkConfig configures the "stdout" sink, which has no keys.
type StdoutSinkConfig struct{}

// Validate accepts the empty configuration.
func (StdoutSinkConfig) Validate() error { return nil }

// StdoutSink writes one JSON object a line, keys sorted, to a writer
// (os.Stdout for the "stdout" type). Every Write ends with its lines out of
// the buffer.
type StdoutSink struct {
	out *jsonlWriter
}

// NewStdoutSink returns a sink writing JSON lines to w; nil means
// os.Stdout.
func NewStdoutSink(w io.Writer) *StdoutSink {
	if w == nil {
		w = os.Stdout
	}
	return &StdoutSink{out: newJSONLWriter(w)}
}

// Name is "stdout".
func (s *StdoutSink) Name() string { return "stdout" }

// Type is "stdout".
func (s *StdoutSink) Type() string { return "stdout" }

// Write writes records, one line each; a record JSON cannot encode is
// rejected.
func (s *StdoutSink) Write(ctx context.Context, records []Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etl: stdout: not writing: %w", err)
	}
	err := s.out.write(records)
	if ferr := s.out.w.Flush(); ferr != nil {
		return ferr
	}
	return err
}

// Flush writes out what is buffered.
func (s *StdoutSink) Flush(ctx context.Context) error { return s.out.w.Flush() }
