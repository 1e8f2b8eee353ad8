package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// newRecordPipeline is the record pipeline of one run.
//
// INTEGRATION: once etl.New is on main, return
//
//	etl.New(src, sinks, opts...)
//
// with etl.WithBatchSize(p.BatchSize), etl.WithDLQ(dlq) when dlq != nil and
// etl.WithMaxDeadLetters(p.MaxDeadLetters) when it is ≥ 0, and delete
// recordPipeline, which only stands in for it meanwhile.
func newRecordPipeline(p *Pipeline, src etl.Source, sinks []etl.Sink, dlq etl.Sink) runtime.Pipeline {
	return &recordPipeline{id: p.ID, src: src, sinks: sinks, dlq: dlq, batch: p.BatchSize, maxDead: p.MaxDeadLetters}
}

// recordPipeline moves every record of a run from its source to its sinks,
// batch by batch: a batch is acknowledged once every sink (or, for records
// a sink rejected, the DLQ) took it.
type recordPipeline struct {
	id      string
	src     etl.Source
	sinks   []etl.Sink
	dlq     etl.Sink
	batch   int
	maxDead int
}

// Run reads until the source is exhausted, has nothing new, or a graceful
// shutdown is requested.
func (rp *recordPipeline) Run(ctx context.Context) error {
	shutdown := runtime.ShutdownRequested(ctx)
	dead := 0
	for {
		select {
		case <-shutdown:
			return nil
		default:
		}
		b, err := rp.src.Read(ctx, rp.batch)
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return fmt.Errorf("source: %w", err)
		}
		if len(b.Records) > 0 {
			n, err := rp.write(ctx, b.Records, &dead)
			if err != nil {
				return err
			}
			if b.Ack != nil {
				if err := b.Ack(ctx); err != nil {
					return fmt.Errorf("source: acknowledge: %w", err)
				}
			}
			runtime.CountRecords(ctx, runtime.RecordCounts{In: int64(len(b.Records)), Out: int64(len(b.Records) - n), DeadLettered: int64(n)})
		}
		if eof || len(b.Records) == 0 {
			return nil
		}
	}
}

// write hands records to every sink and the rejected ones to the DLQ, and
// returns how many were dead-lettered.
func (rp *recordPipeline) write(ctx context.Context, records []etl.Record, dead *int) (int, error) {
	rejected := map[int]string{}
	var order []int
	for i, s := range rp.sinks {
		err := s.Write(ctx, records)
		var rej *etl.RejectedError
		switch {
		case errors.As(err, &rej):
			for _, r := range rej.Rejections {
				if _, seen := rejected[r.Index]; !seen {
					order = append(order, r.Index)
				}
				rejected[r.Index] = fmt.Sprintf("sink %d: %v", i, r.Err)
			}
		case err != nil:
			return 0, fmt.Errorf("sink %d: %w", i, err)
		}
		if err := flush(ctx, s); err != nil {
			return 0, fmt.Errorf("sink %d: %w", i, err)
		}
	}
	if len(order) == 0 {
		return 0, nil
	}
	if rp.dlq == nil {
		return 0, fmt.Errorf("%d records rejected and the pipeline has no dlq; first: %s", len(order), rejected[order[0]])
	}
	*dead += len(order)
	if rp.maxDead >= 0 && *dead > rp.maxDead {
		return 0, fmt.Errorf("%d records dead-lettered in this run, more than max_dead_letters = %d", *dead, rp.maxDead)
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	letters := make([]etl.Record, len(order))
	for i, idx := range order {
		letters[i] = etl.Record{
			"record": records[idx], "error": rejected[idx], "pipeline_id": rp.id,
			"run_number": lease.RunNumber, "fencing_token": lease.FencingToken,
			"time": time.Now().UTC().Format(time.RFC3339Nano),
		}
	}
	if err := rp.dlq.Write(ctx, letters); err != nil {
		return 0, fmt.Errorf("dlq: %w", err)
	}
	if err := flush(ctx, rp.dlq); err != nil {
		return 0, fmt.Errorf("dlq: %w", err)
	}
	return len(order), nil
}

func flush(ctx context.Context, s etl.Sink) error {
	if f, ok := s.(etl.Flusher); ok {
		return f.Flush(ctx)
	}
	return nil
}

// Close closes the source and sinks that are io.Closers.
func (rp *recordPipeline) Close() error {
	comps := []any{rp.src}
	for _, s := range rp.sinks {
		comps = append(comps, s)
	}
	if rp.dlq != nil {
		comps = append(comps, rp.dlq)
	}
	return closeAll(comps)
}

// closeAll closes every component that is an io.Closer.
func closeAll(comps []any) error {
	var errs []error
	for _, c := range comps {
		if cl, ok := c.(io.Closer); ok {
			errs = append(errs, cl.Close())
		}
	}
	return errors.Join(errs...)
}
