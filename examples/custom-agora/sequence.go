package customagora

import (
	"context"
	"errors"
	"io"

	"github.com/agora-etl/agora/etl"
)

// SequenceConfig configures the "sequence" source. Its toml tags are the
// keys its table accepts; the config loader rejects any other.
type SequenceConfig struct {
	// Count is how many records a run reads.
	Count int `toml:"count"`
	// Field names the field holding the number (default "n").
	Field string `toml:"field"`
}

// Validate reports bad values as *etl.FieldError, so the loader points at
// the key's line and column.
func (c SequenceConfig) Validate() error {
	var errs []error
	if c.Count < 0 {
		errs = append(errs, etl.FieldErrorf("count", "%d is negative", c.Count))
	}
	if c.Field == "-" {
		errs = append(errs, etl.FieldErrorf("field", "%q is not a usable field name", c.Field))
	}
	return errors.Join(errs...)
}

// Sequence reads the records {field: 1} … {field: count}.
type Sequence struct {
	field string
	count int
	next  int
}

// NewSequence returns the source a configuration describes.
func NewSequence(cfg SequenceConfig) (*Sequence, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Field == "" {
		cfg.Field = "n"
	}
	return &Sequence{field: cfg.Field, count: cfg.Count}, nil
}

// Type is "sequence", for trace spans.
func (s *Sequence) Type() string { return "sequence" }

// Read returns the next at most max numbers, then io.EOF.
func (s *Sequence) Read(ctx context.Context, max int) (etl.Batch, error) {
	if s.next >= s.count {
		return etl.Batch{}, io.EOF
	}
	var recs []etl.Record
	for ; s.next < s.count && len(recs) < max; s.next++ {
		recs = append(recs, etl.Record{s.field: s.next + 1})
	}
	return etl.Batch{Records: recs}, nil
}

// Register adds the "sequence" source to r.
func Register(r *etl.Registry) {
	etl.RegisterSource(r, "sequence", "the numbers 1 to count",
		func(_ context.Context, cfg SequenceConfig) (etl.Source, error) {
			return NewSequence(cfg)
		})
}
