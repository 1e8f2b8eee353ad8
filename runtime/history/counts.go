package history

// RecordCounts tallies the records one run, or every run of a pipeline,
// moved: read from its source, written to its sinks, sent to its
// dead-letter queue, or left out by a filter. It is defined here, beside
// Record, because every run record carries one; pipelines report theirs
// with runtime.CountRecords.
type RecordCounts struct {
	// In counts records read from the source.
	In int64 `json:"in"`
	// Out counts records every sink accepted.
	Out int64 `json:"out"`
	// DeadLettered counts records a sink rejected that went to the
	// dead-letter queue instead.
	DeadLettered int64 `json:"dead_lettered"`
	// Filtered counts records a transform (a filter) left out on purpose.
	// A run that succeeded has In = Out + DeadLettered + Filtered.
	Filtered int64 `json:"filtered"`
}

// IsZero reports whether nothing was counted, so that a run that moved no
// records can leave its counts out of logs and spans.
func (c RecordCounts) IsZero() bool { return c == RecordCounts{} }

// Add returns the sum of c and d, for totals over runs.
func (c RecordCounts) Add(d RecordCounts) RecordCounts {
	return RecordCounts{In: c.In + d.In, Out: c.Out + d.Out, DeadLettered: c.DeadLettered + d.DeadLettered, Filtered: c.Filtered + d.Filtered}
}
