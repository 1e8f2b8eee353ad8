package runtime

import (
	"context"

	"github.com/agora-etl/agora/internal/isnil"
)

// Pipeline is one unit of scheduled work. Run should return when the work is
// done or ctx is cancelled. A pipeline that also implements io.Closer is
// closed after every run, whatever the run returned.
type Pipeline interface {
	Run(ctx context.Context) error
}

// PipelineFunc adapts an ordinary function to Pipeline.
type PipelineFunc func(ctx context.Context) error

// Run calls f(ctx).
func (f PipelineFunc) Run(ctx context.Context) error { return f(ctx) }

// Factory builds a fresh Pipeline before every run, so no state leaks from one
// run into the next. A factory error counts as a failed run.
type Factory func(ctx context.Context) (Pipeline, error)

// FactoryOf turns a factory that returns a concrete pipeline type into a
// Factory, so user code and generated code keep their own types. A nil
// pipeline returned without an error is reported as a failed run rather than
// a nil-pointer panic.
func FactoryOf[P Pipeline](build func(context.Context) (P, error)) Factory {
	if build == nil {
		return nil
	}
	return func(ctx context.Context) (Pipeline, error) {
		p, err := build(ctx)
		if err != nil {
			return nil, err
		}
		if isnil.Value(p) {
			return nil, ErrNilPipeline
		}
		return p, nil
	}
}
