package etl

import (
	"context"
	"io"
)

// IterableSourceConfig configures the "iterable" source: records written
// inline in the configuration.
type IterableSourceConfig struct {
	// Records are the records every run reads, in order.
	Records []map[string]any `toml:"records"`
}

// Validate accepts every list of records, including an empty one.
func (c IterableSourceConfig) Validate() error { return nil }

// IterableSource reads a fixed list of records, once per run.
type IterableSource struct {
	records []Record
	next    int
}

// NewIterableSource returns a source that reads records in order, then
// io.EOF. Batches are subslices of records, which sinks must not change.
func NewIterableSource(records []Record) *IterableSource {
	return &IterableSource{records: records}
}

// Name is "iterable".
func (s *IterableSource) Name() string { return "iterable" }

// Type is "iterable".
func (s *IterableSource) Type() string { return "iterable" }

// Read returns the next at most max records, then io.EOF.
func (s *IterableSource) Read(ctx context.Context, max int) (Batch, error) {
	if s.next >= len(s.records) {
		return Batch{}, io.EOF
	}
	end := min(s.next+max, len(s.records))
	b := Batch{Records: s.records[s.next:end:end]}
	s.next = end
	return b, nil
}

// newIterableFromConfig converts the configuration's tables to records.
func newIterableFromConfig(cfg IterableSourceConfig) *IterableSource {
	recs := make([]Record, len(cfg.Records))
	for i, r := range cfg.Records {
		recs[i] = Record(r)
	}
	return NewIterableSource(recs)
}
