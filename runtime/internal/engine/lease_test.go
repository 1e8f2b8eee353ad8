package engine

import (
	"context"
	"testing"
)

func TestLeaseFenced(t *testing.T) {
	if (Lease{}).Fenced() || !(Lease{FencingToken: 1}).Fenced() {
		t.Fatal("only a positive token is fenced")
	}
}

func TestContextValues(t *testing.T) {
	ctx := context.Background()
	if _, ok := LeaseFromContext(ctx); ok || ShutdownRequested(ctx) != nil || ParamsFromContext(ctx) != nil {
		t.Fatal("a plain context carries a run's values")
	}
	lease := Lease{PipelineID: "p", RunNumber: 3, FencingToken: 2}
	ch := make(chan struct{})
	ctx = ContextWithParams(ContextWithShutdown(ContextWithLease(ctx, lease), ch), map[string]string{"k": "v"})
	if got, ok := LeaseFromContext(ctx); !ok || got != lease {
		t.Fatalf("lease %+v, %v", got, ok)
	}
	if ShutdownRequested(ctx) != (<-chan struct{})(ch) || ParamsFromContext(ctx)["k"] != "v" {
		t.Fatal("shutdown channel or params lost")
	}
}
