package etl

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sink writes batches of records.
type Sink interface {
	// Write writes records. A nil error means every record was accepted. A
	// *RejectedError means the records it names were refused one by one (a
	// row the database refuses) and every other record was written; the
	// pipeline sends the refused ones to its dead-letter queue. Any other
	// error means the batch as a whole failed (the sink is unreachable): the
	// run fails and is retried under the pipeline's error policy.
	Write(ctx context.Context, records []Record) error
}

// Flusher is implemented by sinks that buffer: Flush makes everything
// written so far durable (flushed and, for files, fsynced). The pipeline
// calls it before a batch is acknowledged and before the run reports
// success.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Completer is implemented by sinks that record a run's completion: the
// postgres and sqlite sinks mark the run's slot completed in their slot
// ledger, so another run of the same slot is refused (fencing.ErrSlotDone).
// The pipeline calls Complete once, when the run succeeds: after its last
// batch was written, flushed and acknowledged, before Run returns nil. An
// error from Complete fails the run. A run that fails never calls it.
type Completer interface {
	Complete(ctx context.Context) error
}

// rejectsFailKey marks the context of a sink Write whose rejections fail
// the run (RejectsFailRun).
type rejectsFailKey struct{}

// RejectsFailRun reports whether a record the sink rejects (a
// *RejectedError) fails the run rather than going to a dead-letter queue:
// the pipeline has none, or ctx is the dead-letter queue's own Write. A
// sink that finds records it must reject then writes none of the batch
// (it rolls back, or sends nothing) and returns the *RejectedError: the
// batch is not acknowledged and is read again by the next run, so rows
// written by this failed run would be written twice, and they would be
// counted nowhere. The SQL, redis_stream and kafka sinks do so (kafka for
// the records it cannot encode; a message the broker refuses after the
// others were produced cannot be taken back); the file sinks buffer a
// batch and write nothing of a failed run's.
func RejectsFailRun(ctx context.Context) bool {
	v, _ := ctx.Value(rejectsFailKey{}).(bool)
	return v
}

// WithRejectsFailRun returns ctx marked as the context of a sink Write
// whose rejections fail the run (RejectsFailRun), as the pipeline marks
// it: for tests of a sink, and pipelines of your own over sinks.
func WithRejectsFailRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, rejectsFailKey{}, true)
}

// SlotReplacer is implemented by sinks that can tell whether a re-run of
// a slot replaces what the slot's earlier run wrote, so that the slot can
// be reprocessed (a backfill with --reprocess) without its rows twice:
// ReplacesSlots is true for the postgres and sqlite sinks in mode =
// "upsert" (a re-run that writes the same keys replaces their rows) and
// "replace" (a re-run's first write deletes the slot's rows), and false in
// mode = "insert". A sink that does not implement it is taken not to
// replace (files, kafka, redis streams, stdout, http: a re-run appends).
//
// The pipeline etl.New returns implements it too: true only when it has
// sinks and every one of them replaces slots. The dead-letter queue is not
// asked: a re-run sends the records it rejects again, so the queue may
// hold a slot's dead letters twice, which is what a queue of records to
// look at and replay can take.
type SlotReplacer interface {
	ReplacesSlots() bool
}

// ReplacesSlots reports whether sink replaces slots (SlotReplacer).
func ReplacesSlots(sink Sink) bool {
	r, ok := sink.(SlotReplacer)
	return ok && r.ReplacesSlots()
}

// Opener is implemented by sinks that can get ready to write before a run
// reads its first record: the file sink creates its file (and missing
// parent folders), the SQL sinks reach their database. The pipeline opens
// every sink and the dead-letter queue first, so a run that cannot write
// everywhere fails before it reads or writes anything. A sink that opens
// itself at its first Write still works; it only learns of a problem later.
type Opener interface {
	Open(ctx context.Context) error
}

// Discarder is implemented by sinks that buffer: Discard drops what was
// written since the last Flush, without writing it. The pipeline calls it
// when a run fails (a timeout, a sink or the dead-letter queue failing)
// before it closes the sink, so the records of a batch that was never
// acknowledged are not written out by Close: the source delivers them
// again.
type Discarder interface {
	Discard()
}

// Rejection is one record a sink refused.
type Rejection struct {
	// Index is the record's position in the batch passed to Write.
	Index int
	// Err says why.
	Err error
}

// ErrUnknownField is wrapped by the rejection of a record with a field the
// sink's table has no column for: the postgres and sqlite sinks'
// on_unknown_field = "reject" (or, with "ignore", a record none of whose
// fields is a column).
var ErrUnknownField = errors.New("etl: field is not a column of the table")

// RejectedError is returned by Sink.Write when some records were refused
// one by one and the rest written.
type RejectedError struct {
	// Rejections lists the refused records, each index at most once.
	Rejections []Rejection
}

// Error summarises the rejections.
func (e *RejectedError) Error() string {
	switch len(e.Rejections) {
	case 0:
		return "etl: no record rejected"
	case 1:
		return fmt.Sprintf("etl: record %d rejected: %v", e.Rejections[0].Index, e.Rejections[0].Err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "etl: %d records rejected, first: record %d: %v", len(e.Rejections), e.Rejections[0].Index, e.Rejections[0].Err)
	return b.String()
}
