package config

import (
	"errors"
	"io"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// newRecordPipeline is the record pipeline of one run, with the pipeline's
// batch size, dead-letter queue and dead-letter limit (negative: none, as
// etl.WithMaxDeadLetters has it).
func newRecordPipeline(p *Pipeline, src etl.Source, sinks []etl.Sink, dlq etl.Sink) runtime.Pipeline {
	opts := []etl.Option{etl.WithBatchSize(p.BatchSize), etl.WithMaxDeadLetters(p.MaxDeadLetters)}
	if dlq != nil {
		opts = append(opts, etl.WithDLQ(dlq))
	}
	if len(p.Transforms) > 0 {
		opts = append(opts, etl.WithTransforms(p.Transforms...))
	}
	return etl.New(src, sinks, opts...)
}

// closeAll closes every component that is an io.Closer, for a run whose
// components could not all be built.
func closeAll(comps []any) error {
	var errs []error
	for _, c := range comps {
		if cl, ok := c.(io.Closer); ok {
			errs = append(errs, cl.Close())
		}
	}
	return errors.Join(errs...)
}
