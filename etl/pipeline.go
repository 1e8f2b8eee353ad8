package etl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// Errors a run can fail with; each is wrapped with the details.
var (
	// ErrNoDLQ: a sink rejected records and the pipeline has no dead-letter
	// queue to put them in.
	ErrNoDLQ = errors.New("etl: a sink rejected records and the pipeline has no dead-letter queue")
	// ErrTooManyDeadLetters: the run dead-lettered more records than
	// WithMaxDeadLetters allows.
	ErrTooManyDeadLetters = errors.New("etl: too many dead letters")
	// ErrDLQFailed: the dead-letter queue did not take every dead letter; the
	// batch was not acknowledged.
	ErrDLQFailed = errors.New("etl: the dead-letter queue failed")
	// ErrAlreadyRun: Run was called a second time. A pipeline closes its
	// components at the end of its run; build a fresh one per run (a
	// runtime.Factory does).
	ErrAlreadyRun = errors.New("etl: pipeline already ran; build a new one for every run")
)

// New returns a pipeline that, when run, moves records from source to every
// sink in batches.
//
// Before it reads anything, a run opens every sink and the dead-letter
// queue that is an Opener; an error there fails the run before a record was
// read or written anywhere.
//
// A run reads batches of at most the batch size until the source returns
// io.EOF or an empty batch, or until runtime.ShutdownRequested(ctx) is closed
// (checked between batches: the batch in flight is finished, then Run returns
// nil). A cancelled ctx makes Run return the context's error.
//
// Each batch is written to every sink, in order, whole. A *RejectedError
// from a sink turns each record it names into a dead letter for the
// dead-letter queue (WithDLQ); the other records count as written. Any other
// sink error fails the run. Once every sink has taken the batch, its dead
// letters are written to the dead-letter queue in one Write; if that fails in
// any way the run fails. Then every sink that buffers (Flusher), and the
// dead-letter queue, is flushed and the batch acknowledged (Batch.Ack). A
// batch whose run failed is never acknowledged, so a source that
// acknowledges redelivers it: nothing is lost. Sources without Ack are
// flushed once, at the end of the run. When the run succeeds (the source is
// exhausted, or a shutdown was asked for between batches), every sink and
// the dead-letter queue that implements Completer is told so, after the
// last flush; an error there fails the run.
//
// Before the sinks, every record goes through the transforms
// (WithTransforms), in order: a record a transform leaves out is not
// written, one a transform fails on is dead-lettered.
//
// Per batch the run adds to runtime.CountRecords: In when read, then Out
// (records every sink accepted), DeadLettered (records a transform failed
// on or at least one sink rejected) and Filtered (records a transform left
// out) once the sinks and the dead-letter queue took them, so
// In = Out + DeadLettered + Filtered for a run that succeeded.
//
// A run whose context ended writes nothing more: the context is checked
// before every sink write, the dead-letter queue's write, the flushes and
// the acknowledgement. A dead letter carries the source's record as it was
// before the transforms (see DeadLetterRecord). Without a dead-letter
// queue, the error of a record that fails names its place in the batch and,
// when the source gives it (Batch.Positions), in the source.
//
// When a run fails, every sink and the dead-letter queue that is a
// Discarder discards what it buffered since its last flush, so the batch
// that was not acknowledged is not written out at Close. At the end of the
// run, whatever its outcome, the source, the sinks and the dead-letter
// queue that implement io.Closer are closed. A pipeline runs
// once; a second Run returns ErrAlreadyRun.
func New(source Source, sinks []Sink, opts ...Option) runtime.Pipeline {
	p := &pipeline{source: source, batchSize: DefaultBatchSize, maxDead: -1, now: systemNow}
	p.sinks = make([]sinkSlot, len(sinks))
	for i, s := range sinks {
		p.sinks[i] = sinkSlot{sink: s, index: i, kind: "sink", name: componentName(s, "sinks["+strconv.Itoa(i)+"]"), typ: componentType(s)}
	}
	for _, opt := range opts {
		opt(p)
	}
	for _, t := range p.pendingTransforms {
		p.transforms = append(p.transforms, transformSlot{t: t})
	}
	p.pendingTransforms = nil
	for i := range p.transforms {
		p.transforms[i].name = componentName(p.transforms[i].t, "transforms["+strconv.Itoa(i)+"]")
	}
	if p.dlq != nil {
		p.dlqSlot = sinkSlot{sink: p.dlq, index: -1, kind: "dlq", name: componentName(p.dlq, "dlq"), typ: componentType(p.dlq)}
	}
	return p
}

// pipeline is what New returns.
type pipeline struct {
	source    Source
	sinks     []sinkSlot
	dlq       Sink
	dlqSlot   sinkSlot
	batchSize int

	pendingTransforms []Transform
	transforms        []transformSlot
	maxDead           int
	now               func() time.Time

	ran atomic.Bool

	// Per-run state, reused across batches.
	deadTotal int
	letters   []Record
	kept      []Record // the batch's records after the transforms
	keptAt    []int    // keptAt[i]: the batch index of kept[i]
	srcs      []Record // srcs[i]: the source's record of kept[i] (with a DLQ)
	srcName   string
	marks     []uint64 // marks[i] == gen: record i of this batch was rejected
	gen       uint64
	dirty     bool // something was written since the last flush
}

// sinkSlot is a sink with its description, computed once.
type sinkSlot struct {
	sink  Sink
	index int
	kind  string // "sink" or "dlq"
	name  string
	typ   string
	// counters are the sink's metrics in this run (nil outside a pool
	// run, or for the dead-letter queue).
	counters *sinkCounters
}

// Run moves the run's records; see New.
func (p *pipeline) Run(ctx context.Context) (err error) {
	if err := p.problems(); err != nil {
		return err
	}
	if p.ran.Swap(true) {
		return ErrAlreadyRun
	}
	defer func() {
		if err != nil {
			p.discardAll()
		}
		if cerr := p.closeAll(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	tracer := runTracer(ctx)
	lease, pooled := runtime.LeaseFromContext(ctx)
	if pooled {
		for i := range p.sinks {
			p.sinks[i].counters = countersFor(lease.PipelineID, p.sinks[i].name)
		}
	}
	shutdown := runtime.ShutdownRequested(ctx)
	srcName := componentName(p.source, "source")
	srcType := componentType(p.source)
	p.srcName = srcName
	if err := p.openAll(ctx); err != nil {
		return err
	}
	// Marks the run as one that counts its records, so a Continuous run
	// that reads nothing is logged at DEBUG (see runtime.CountRecords).
	runtime.CountRecords(ctx, history.RecordCounts{})
	for {
		select {
		case <-shutdown:
			return p.finish(ctx)
		default:
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, rerr := p.read(ctx, tracer, srcName, srcType)
		eof := errors.Is(rerr, io.EOF)
		if rerr != nil && !eof {
			return fmt.Errorf("etl: source %s: %w", srcName, rerr)
		}
		if len(batch.Records) > 0 {
			runtime.CountRecords(ctx, history.RecordCounts{In: int64(len(batch.Records))})
			if err := p.process(ctx, tracer, lease, batch); err != nil {
				return err
			}
		}
		if eof || len(batch.Records) == 0 {
			return p.finish(ctx)
		}
	}
}

// problems reports what makes the pipeline unrunnable.
func (p *pipeline) problems() error {
	var errs []error
	if p.source == nil {
		errs = append(errs, errors.New("etl: nil source"))
	}
	if len(p.sinks) == 0 {
		errs = append(errs, errors.New("etl: no sinks"))
	}
	for _, s := range p.sinks {
		if s.sink == nil {
			errs = append(errs, fmt.Errorf("etl: sink %d is nil", s.index))
		}
	}
	for i, t := range p.transforms {
		if t.t == nil {
			errs = append(errs, fmt.Errorf("etl: transform %d is nil", i))
		}
	}
	if p.batchSize < 1 {
		errs = append(errs, fmt.Errorf("etl: batch size %d, want ≥ 1", p.batchSize))
	}
	return errors.Join(errs...)
}

// read reads one batch under its span.
func (p *pipeline) read(ctx context.Context, tracer trace.Tracer, name, typ string) (Batch, error) {
	sctx, span := tracer.Start(ctx, spanSourceRead, trace.WithAttributes(
		attrKind.String("source"), attrType.String(typ), attrName.String(name), attrMax.Int(p.batchSize)))
	batch, err := p.source.Read(sctx, p.batchSize)
	if span.IsRecording() {
		span.SetAttributes(attrRecords.Int(len(batch.Records)))
	}
	if errors.Is(err, io.EOF) {
		endSpan(span, nil)
	} else {
		endSpan(span, err)
	}
	return batch, err
}

// write writes records to one sink under its span.
func (p *pipeline) write(ctx context.Context, tracer trace.Tracer, s *sinkSlot, records []Record) error {
	sctx, span := tracer.Start(ctx, spanSinkWrite, trace.WithAttributes(
		attrKind.String(s.kind), attrType.String(s.typ), attrName.String(s.name), attrRecords.Int(len(records))))
	if p.dlq == nil || s == &p.dlqSlot {
		// A rejection fails the run here: the sink must not write the
		// rest of the batch (RejectsFailRun).
		sctx = WithRejectsFailRun(sctx)
	}
	err := s.sink.Write(sctx, records)
	var rej *RejectedError
	if errors.As(err, &rej) {
		if span.IsRecording() {
			span.SetAttributes(attrRejected.Int(len(rej.Rejections)))
		}
		if len(rej.Rejections) == 0 {
			err = nil
		}
	}
	endSpan(span, err)
	p.dirty = true
	return err
}

// process takes one batch through the sinks, the dead-letter queue, the
// flushes and the acknowledgement.
func (p *pipeline) process(ctx context.Context, tracer trace.Tracer, lease runtime.Lease, b Batch) error {
	recs := b.Records
	p.letters = p.letters[:0]
	p.gen++
	dead, tdead, filtered := 0, 0, 0
	transformed := len(p.transforms) > 0
	if transformed {
		var err error
		recs, tdead, filtered, err = p.applyTransforms(ctx, b, lease)
		if err != nil {
			return err
		}
	}
	// source returns the source's record of recs[i], the record the sinks
	// got when it differs, and its position.
	source := func(i int) (Record, Record, string) {
		if !transformed {
			return recs[i], nil, b.position(i)
		}
		if i >= len(p.srcs) { // no dead-letter queue: no copies kept
			return recs[i], nil, b.position(p.keptAt[i])
		}
		return p.srcs[i], recs[i], b.position(p.keptAt[i])
	}
	for i := range p.sinks {
		if len(recs) == 0 {
			break
		}
		s := &p.sinks[i]
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("etl: not writing to sink %s: %w", s.name, err)
		}
		err := p.write(ctx, tracer, s, recs)
		if err == nil {
			s.counters.wrote(len(recs), 0)
			continue
		}
		var rej *RejectedError
		if !errors.As(err, &rej) {
			s.counters.failed()
			return fmt.Errorf("etl: sink %s: %w", s.name, err)
		}
		s.counters.wrote(len(recs)-len(rej.Rejections), len(rej.Rejections))
		for _, r := range rej.Rejections {
			if r.Index < 0 || r.Index >= len(recs) {
				return fmt.Errorf("etl: sink %s rejected record %d of a batch of %d", s.name, r.Index, len(recs))
			}
		}
		if p.dlq == nil {
			first := rej.Rejections[0]
			_, _, pos := source(first.Index)
			return fmt.Errorf("%w: sink %s rejected %s: %w", ErrNoDLQ, s.name, p.where(first.Index, len(recs), pos), first.Err)
		}
		if len(p.marks) < len(recs) {
			p.marks = make([]uint64, len(recs))
		}
		at := p.now()
		for _, r := range rej.Rejections {
			if p.marks[r.Index] != p.gen {
				p.marks[r.Index] = p.gen
				dead++
			}
			src, out, pos := source(r.Index)
			p.letters = append(p.letters, deadLetter(src, out, pos, r.Err, s.name, s.index, lease, at))
		}
	}
	if tdead+dead > 0 {
		p.deadTotal += tdead + dead
		if p.maxDead >= 0 && p.deadTotal > p.maxDead {
			return fmt.Errorf("%w: %d records of this run rejected, max_dead_letters is %d", ErrTooManyDeadLetters, p.deadTotal, p.maxDead)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w (%s): not writing %d dead letters: %w", ErrDLQFailed, p.dlqSlot.name, len(p.letters), err)
		}
		err := p.write(ctx, tracer, &p.dlqSlot, p.letters)
		if err != nil {
			return fmt.Errorf("%w (%s, %d dead letters; the batch is not acknowledged): %w", ErrDLQFailed, p.dlqSlot.name, len(p.letters), err)
		}
		clear(p.letters) // let the batch's records be collected
	}
	if b.Ack != nil {
		if err := p.flushAll(ctx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("etl: not acknowledging a batch of %d records: %w", len(b.Records), err)
		}
		if err := b.Ack(ctx); err != nil {
			return fmt.Errorf("etl: acknowledging a batch of %d records: %w", len(b.Records), err)
		}
	}
	runtime.CountRecords(ctx, history.RecordCounts{Out: int64(len(recs) - dead), DeadLettered: int64(tdead + dead), Filtered: int64(filtered)})
	if transformed {
		clear(p.kept)
		clear(p.srcs)
	}
	return nil
}

// where describes record i of a batch of n for an error, with its
// position in the source when known.
func (p *pipeline) where(i, n int, pos string) string {
	w := fmt.Sprintf("record %d of a batch of %d", i+1, n)
	if pos != "" {
		w += " (" + p.srcName + " at " + pos + ")"
	}
	return w
}

// ReplacesSlots reports whether a re-run of a slot replaces what the
// slot's earlier run wrote (SlotReplacer): the pipeline has sinks and
// every one of them does. The dead-letter queue is not asked (see
// SlotReplacer).
func (p *pipeline) ReplacesSlots() bool {
	for _, s := range p.sinks {
		if !ReplacesSlots(s.sink) {
			return false
		}
	}
	return len(p.sinks) > 0
}

// finish ends a run that succeeded: it flushes what is buffered, then
// tells every sink, and the dead-letter queue, that records the run's
// completion (Completer).
func (p *pipeline) finish(ctx context.Context) error {
	if err := p.flushAll(ctx); err != nil {
		return err
	}
	for i := range p.sinks {
		if err := complete(ctx, &p.sinks[i]); err != nil {
			return err
		}
	}
	if p.dlq != nil {
		return complete(ctx, &p.dlqSlot)
	}
	return nil
}

func complete(ctx context.Context, s *sinkSlot) error {
	c, ok := s.sink.(Completer)
	if !ok {
		return nil
	}
	if err := c.Complete(ctx); err != nil {
		what := "sink"
		if s.kind == "dlq" {
			what = "dead-letter queue"
		}
		return fmt.Errorf("etl: %s %s: complete: %w", what, s.name, err)
	}
	return nil
}

// flushAll flushes every sink and the dead-letter queue that buffers, when
// anything was written since the last flush.
func (p *pipeline) flushAll(ctx context.Context) error {
	if !p.dirty {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etl: not flushing the sinks: %w", err)
	}
	for i := range p.sinks {
		if err := flush(ctx, &p.sinks[i]); err != nil {
			return err
		}
	}
	if p.dlq != nil {
		if err := flush(ctx, &p.dlqSlot); err != nil {
			return err
		}
	}
	p.dirty = false
	return nil
}

func flush(ctx context.Context, s *sinkSlot) error {
	f, ok := s.sink.(Flusher)
	if !ok {
		return nil
	}
	if err := f.Flush(ctx); err != nil {
		s.counters.failed()
		if s.kind == "dlq" {
			return fmt.Errorf("%w (%s): flush: %w", ErrDLQFailed, s.name, err)
		}
		return fmt.Errorf("etl: sink %s: flush: %w", s.name, err)
	}
	return nil
}

// openAll opens every sink and the dead-letter queue that is an Opener,
// before the run reads anything: a run that cannot write everywhere
// writes nowhere.
func (p *pipeline) openAll(ctx context.Context) error {
	for i := range p.sinks {
		if err := open(ctx, &p.sinks[i]); err != nil {
			return err
		}
	}
	if p.dlq != nil {
		return open(ctx, &p.dlqSlot)
	}
	return nil
}

func open(ctx context.Context, s *sinkSlot) error {
	o, ok := s.sink.(Opener)
	if !ok {
		return nil
	}
	if err := o.Open(ctx); err != nil {
		if s.kind == "dlq" {
			return fmt.Errorf("%w (%s): open: %w", ErrDLQFailed, s.name, err)
		}
		return fmt.Errorf("etl: sink %s: open: %w", s.name, err)
	}
	return nil
}

// discardAll drops what the sinks and the dead-letter queue buffered since
// their last flush (Discarder): the run failed, its batch in flight was not
// acknowledged and comes again, so Close must not write it out.
func (p *pipeline) discardAll() {
	for _, s := range p.sinks {
		if d, ok := s.sink.(Discarder); ok {
			d.Discard()
		}
	}
	if d, ok := p.dlq.(Discarder); ok {
		d.Discard()
	}
}

// closeAll closes every component that is an io.Closer.
func (p *pipeline) closeAll() error {
	var errs []error
	closeOne := func(what string, c any) {
		if cl, ok := c.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, fmt.Errorf("etl: closing %s: %w", what, err))
			}
		}
	}
	closeOne("source "+componentName(p.source, "source"), p.source)
	for _, s := range p.sinks {
		closeOne("sink "+s.name, s.sink)
	}
	if p.dlq != nil {
		closeOne("dead-letter queue "+p.dlqSlot.name, p.dlq)
	}
	return errors.Join(errs...)
}
