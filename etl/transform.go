package etl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Transform changes or drops records between the source and the sinks.
// The pipeline applies its transforms (WithTransforms) to each record of a
// batch in order; the expression-based ones (CEL filter and map) and the
// field ones (drop, keep, rename) are built by package etl/transform.
type Transform interface {
	// Apply returns the record to pass on, which may be r changed in
	// place, and keep = false to leave the record out (a filter). An error
	// sends the record, as this transform received it, to the dead-letter
	// queue with the error; the run goes on.
	Apply(ctx context.Context, r Record) (out Record, keep bool, err error)
}

// TransformFunc adapts a function to Transform.
type TransformFunc func(ctx context.Context, r Record) (Record, bool, error)

// Apply calls f.
func (f TransformFunc) Apply(ctx context.Context, r Record) (Record, bool, error) { return f(ctx, r) }

// ErrTransformFailed wraps the error of a record a transform could not
// handle when the pipeline has no dead-letter queue, which fails the run.
var ErrTransformFailed = errors.New("etl: a transform failed on a record and the pipeline has no dead-letter queue")

// WithTransforms applies ts, in order, to every record between the source
// and the sinks. A record a transform leaves out counts as filtered
// (history.RecordCounts.Filtered); one a transform fails on becomes a dead
// letter whose sink field is the transform's Name, or "transforms[i]" after
// its position, and whose sink_index is -1. A transform that fails once
// the run's context has ended fails the run instead, with the context's
// error: the record is not at fault, and nothing of its batch is written.
func WithTransforms(ts ...Transform) Option {
	return func(p *pipeline) { p.pendingTransforms = append(p.pendingTransforms, ts...) }
}

// transformSlot is a transform with its name, computed once.
type transformSlot struct {
	t    Transform
	name string
}

// applyTransforms runs the transforms over b's records and returns the
// records to write (in a buffer the pipeline reuses; p.keptAt gives each
// one's batch index and, with a dead-letter queue, p.srcs the source's
// record), how many a transform failed on (their dead letters appended to
// p.letters) and how many were filtered. A transform may change a record
// in place, so with a dead-letter queue each record is copied (shallowly)
// before the first transform: a dead letter carries the record as the
// source produced it.
func (p *pipeline) applyTransforms(ctx context.Context, b Batch, lease runtime.Lease) (kept []Record, dead, filtered int, err error) {
	kept, keptAt, srcs := p.kept[:0], p.keptAt[:0], p.srcs[:0]
	var at time.Time
next:
	for bi, r := range b.Records {
		src := r
		if p.dlq != nil {
			r = maps.Clone(r)
		}
		for i := range p.transforms {
			ts := &p.transforms[i]
			out, keep, terr := ts.t.Apply(ctx, r)
			if terr != nil {
				if ctx.Err() != nil {
					// The run ended (its timeout, a lost lease, a
					// shutdown) while the transform ran: the record is
					// not at fault, and nothing of the batch is written.
					return nil, 0, 0, fmt.Errorf("etl: %s stopped with the run: %w", ts.name, errors.Join(runEnded(ctx), terr))
				}
				if p.dlq == nil {
					return nil, 0, 0, fmt.Errorf("%w: %s failed on %s: %w", ErrTransformFailed, ts.name, p.where(bi, len(b.Records), b.position(bi)), terr)
				}
				if at.IsZero() {
					at = p.now()
				}
				var received Record
				if i > 0 {
					received = r
				}
				p.letters = append(p.letters, deadLetter(src, received, b.position(bi), terr, ts.name, -1, lease, at))
				dead++
				continue next
			}
			if !keep {
				filtered++
				continue next
			}
			r = out
		}
		kept = append(kept, r)
		keptAt = append(keptAt, bi)
		if p.dlq != nil {
			srcs = append(srcs, src)
		}
	}
	p.kept, p.keptAt, p.srcs = kept, keptAt, srcs
	return kept, dead, filtered, nil
}

// runEnded is ctx's error, and its cause when that says more (the run's
// timeout, for one).
func runEnded(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}
