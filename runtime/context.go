package runtime

import (
	"context"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// ContextWithLease returns a copy of ctx that carries lease, as the context of
// every pool run does; tests of pipelines can use it to fake one.
func ContextWithLease(ctx context.Context, lease Lease) context.Context {
	return engine.ContextWithLease(ctx, engine.Lease(lease))
}

// LeaseFromContext returns the lease of the run ctx belongs to. Pass
// lease.FencingToken to the downstream store so it can reject stale writers.
func LeaseFromContext(ctx context.Context) (Lease, bool) {
	lease, ok := engine.LeaseFromContext(ctx)
	return Lease(lease), ok
}

// ContextWithShutdown returns a copy of ctx whose ShutdownRequested channel is
// ch, as the context of every pool run has; tests of pipelines can use it to
// fake a shutdown.
func ContextWithShutdown(ctx context.Context, ch <-chan struct{}) context.Context {
	return engine.ContextWithShutdown(ctx, ch)
}

// ShutdownRequested returns a channel closed when a graceful shutdown begins.
// The run's context stays alive until the graceful timeout passes, so a
// pipeline that loops should select on this channel, finish its batch and
// return. Outside a pool run it returns nil, which never fires.
func ShutdownRequested(ctx context.Context) <-chan struct{} {
	return engine.ShutdownRequested(ctx)
}
