package runtime

import (
	"context"
	"errors"
	"testing"
)

type ctxKey struct{}

func TestRunContextCarriesLeaseShutdownAndParentValues(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	shutdown := make(chan struct{})
	lease := Lease{PipelineID: "p", RunNumber: 42, FencingToken: 7}
	ctx, cancel := newRunContext(context.WithoutCancel(parent), lease, shutdown)
	defer cancel(nil)

	got, ok := LeaseFromContext(ctx)
	if !ok || got != lease {
		t.Fatalf("LeaseFromContext = %+v, %v; want %+v", got, ok, lease)
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Fatalf("parent value lost")
	}
	select {
	case <-ShutdownRequested(ctx):
		t.Fatal("shutdown fired early")
	default:
	}
	close(shutdown)
	select {
	case <-ShutdownRequested(ctx):
	default:
		t.Fatal("shutdown channel not wired")
	}
	if ctx.Err() != nil {
		t.Fatal("shutdown must not cancel the run context")
	}
	cancel(ErrLeaseLost)
	if !errors.Is(context.Cause(ctx), ErrLeaseLost) {
		t.Fatalf("cause = %v", context.Cause(ctx))
	}
}

func TestRunContextFollowsCancellableParent(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := newRunContext(parent, Lease{}, nil)
	defer cancel(nil)
	cancelParent()
	<-ctx.Done()
	if ShutdownRequested(ctx) != nil {
		t.Fatal("nil shutdown channel expected")
	}
}
