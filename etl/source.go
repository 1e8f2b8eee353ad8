package etl

import "context"

// Source reads the records of a run in batches.
type Source interface {
	// Read returns the next batch of at most max records. It returns io.EOF,
	// with an empty batch, when the source is exhausted for this run. An
	// empty batch with a nil error means nothing is available now (a stream
	// that stayed quiet for its block timeout); the run then ends
	// successfully, and a continuous schedule starts the next one at once.
	Read(ctx context.Context, max int) (Batch, error)
}

// Batch is what one Read returned.
type Batch struct {
	// Records are the batch's records, in source order.
	Records []Record
	// Ack, when not nil, tells the source that every record of the batch is
	// safe: written by every sink or, when a sink rejected it, by the
	// dead-letter queue. A source that acknowledges (a Redis stream consumer
	// group) must redeliver a batch that was never acknowledged.
	Ack func(ctx context.Context) error
	// Positions, when not nil, says where the source has each record
	// (Positions[i] for Records[i]), such as a redis_stream entry id. The
	// pipeline puts it in dead letters (DeadLetterPosition) and in the
	// error of a run a record failed without a dead-letter queue, so the
	// pipeline's status names the record that blocks it.
	Positions []string
}

// position describes record i of b for an error: its position when the
// source gives it.
func (b Batch) position(i int) string {
	if i < len(b.Positions) {
		return b.Positions[i]
	}
	return ""
}
