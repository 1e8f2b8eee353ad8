package engine

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type closer struct {
	PipelineFunc
	err error
}

func (c closer) Close() error { return c.err }

// TestAttemptErrors: a nil pipeline, a panic and a Close error each fail
// the run, and the lease is given back every time.
func TestAttemptErrors(t *testing.T) {
	ok := PipelineFunc(func(context.Context) error { return nil })
	for _, tc := range []struct {
		name    string
		factory FactoryFunc
		want    string
	}{
		{"nil pipeline", func(context.Context) (Pipeline, error) { return nil, nil }, ErrNilPipeline.Error()},
		{"factory error", func(context.Context) (Pipeline, error) { return nil, errors.New("no db") }, "factory: no db"},
		{"panic in Run", func(context.Context) (Pipeline, error) {
			return PipelineFunc(func(context.Context) error { panic("oops") }), nil
		}, "panic in Run: oops"},
		{"close error", func(context.Context) (Pipeline, error) { return closer{ok, errors.New("flush")}, nil }, "close: flush"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(systemClock{}, slog.New(slog.DiscardHandler))
			r := newRunner(&Spec{PipelineID: "p", Schedule: every(time.Minute), Factory: tc.factory}, env)
			o, _, err := r.attempt(RunNumberAuto, time.Now(), 0, true)
			if o != outcomeFailure || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("outcome %d, error %v; want a failure saying %q", o, err, tc.want)
			}
			if _, held := env.coord.CurrentLease("p"); held {
				t.Fatal("the lease was not given back")
			}
		})
	}
}
