package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

func TestRunContextCarriesLeaseShutdownAndParentValues(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	r := &Runner{}
	lease := Lease{PipelineID: "p", RunNumber: 42, FencingToken: 7}
	ctx := newRunContext(context.WithoutCancel(parent), lease, r)
	cancel := ctx.cancel
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
	r.stop()
	select {
	case <-ShutdownRequested(ctx):
	default:
		t.Fatal("shutdown channel not wired")
	}
	if ctx.Err() != nil || ctx.inner.Load() != nil {
		t.Fatal("shutdown must not cancel the run context, nor build its cancel layer")
	}
	cancel(ErrLeaseLost)
	if !errors.Is(context.Cause(ctx), ErrLeaseLost) || !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("cause = %v, err = %v", context.Cause(ctx), ctx.Err())
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done not closed after cancel")
	}
}

func TestRunContextCancelReachesDerivedContexts(t *testing.T) {
	ctx := newRunContext(context.Background(), Lease{PipelineID: "p"}, &Runner{})
	cancel := ctx.cancel
	child, stopChild := context.WithTimeout(ctx, time.Hour)
	defer stopChild()
	afterFunc := make(chan struct{})
	context.AfterFunc(ctx, func() { close(afterFunc) })
	if _, ok := LeaseFromContext(child); !ok {
		t.Fatal("derived context lost the lease")
	}
	cancel(ErrForcedShutdown)
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("derived context not cancelled")
	}
	if !errors.Is(context.Cause(child), ErrForcedShutdown) {
		t.Fatalf("child cause = %v", context.Cause(child))
	}
	select {
	case <-afterFunc:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterFunc not called")
	}
}

func TestRunContextCancelledBeforeAnyoneLooked(t *testing.T) {
	ctx := newRunContext(context.Background(), Lease{}, &Runner{})
	cancel := ctx.cancel
	if ctx.Err() != nil || ctx.cancelled() != nil {
		t.Fatal("fresh context cancelled")
	}
	cancel(nil)
	if ctx.inner.Load() != nil {
		t.Fatal("cancel built the layer")
	}
	if !errors.Is(ctx.cancelled(), context.Canceled) || !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("err = %v", ctx.Err())
	}
	<-ctx.Done()
	cancel(ErrLeaseLost) // the first cause wins
	if c := context.Cause(ctx); !errors.Is(c, context.Canceled) {
		t.Fatalf("cause = %v", c)
	}
}

func TestRunContextFollowsCancellableBase(t *testing.T) {
	base, cancelBase := context.WithCancel(context.Background())
	r := &Runner{}
	r.stop()
	ctx := newRunContext(base, Lease{}, r)
	defer ctx.cancel(nil)
	select {
	case <-ShutdownRequested(ctx):
	default:
		t.Fatal("a channel asked for after stop must be closed")
	}
	done := ctx.Done()
	cancelBase()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("base cancellation did not reach the run")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("err = %v", ctx.Err())
	}
}
