package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWatchTimeout(t *testing.T) {
	env := testEnv(systemClock{}, nil)
	r := newRunner(&Spec{PipelineID: "p", Settings: &Settings{Timeout: time.Millisecond}}, env)
	ctx := newRunContext(context.Background(), Lease{}, r)
	stop := r.watchTimeout(ctx)
	<-ctx.Done()
	if err := stop(); !errors.Is(err, ErrRunTimeout) || !errors.Is(context.Cause(ctx), ErrRunTimeout) {
		t.Fatalf("timed out with %v, cause %v", err, context.Cause(ctx))
	}
	r.sp.Timeout = 0
	if err := r.watchTimeout(ctx)(); err != nil {
		t.Fatalf("no timeout, yet %v", err)
	}
}
