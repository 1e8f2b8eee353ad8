package etl

import (
	"time"

	"github.com/agora-etl/agora/runtime"
)

// DefaultBatchSize is the number of records a pipeline asks its source for
// at a time unless WithBatchSize says otherwise.
const DefaultBatchSize = 500

// Option configures a pipeline built by New.
type Option func(*pipeline)

// WithDLQ sends the records a sink rejects to dlq, as dead letters (see
// DeadLetterRecord). Without a dead-letter queue a rejection fails the run.
func WithDLQ(dlq Sink) Option {
	return func(p *pipeline) { p.dlq = dlq }
}

// WithBatchSize sets how many records the pipeline asks its source for at a
// time (default DefaultBatchSize). A value below 1 makes Run fail.
func WithBatchSize(n int) Option {
	return func(p *pipeline) { p.batchSize = n }
}

// WithMaxDeadLetters fails the run once more than n records of it have been
// dead-lettered (default: unlimited). n = 0 fails on the first rejection; a
// negative n means unlimited.
func WithMaxDeadLetters(n int) Option {
	return func(p *pipeline) { p.maxDead = n }
}

// WithClock sets the clock that stamps dead letters (default the system
// clock), for tests.
func WithClock(c runtime.Clock) Option {
	return func(p *pipeline) { p.now = c.Now }
}

func systemNow() time.Time { return time.Now() }
