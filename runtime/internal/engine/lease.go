package engine

import (
	"context"
	"time"
)

// Lease is runtime.Lease with the same fields, so that converting one into
// the other costs nothing; runtime's documents them.
type Lease struct {
	PipelineID   string
	WorkerID     string
	RunNumber    int64
	Slot         bool
	Backfill     bool
	Reprocess    bool
	FencingToken int64
	AcquiredAt   time.Time
	ExpiresAt    time.Time
}

// Fenced reports whether the lease carries a real fencing token.
func (l Lease) Fenced() bool { return l.FencingToken > 0 }

// The context keys of a run's values. They live here, with the run context
// that answers them, and runtime's helpers read and write them, so a lease
// put by either side is read by the other.
type (
	leaseKey    struct{}
	shutdownKey struct{}
	recordsKey  struct{}
	paramsKey   struct{}
)

// ContextWithLease returns a copy of ctx that carries lease.
func ContextWithLease(ctx context.Context, lease Lease) context.Context {
	return context.WithValue(ctx, leaseKey{}, lease)
}

// LeaseFromContext returns the lease of the run ctx belongs to.
func LeaseFromContext(ctx context.Context) (Lease, bool) {
	lease, ok := ctx.Value(leaseKey{}).(Lease)
	return lease, ok
}

// ContextWithShutdown returns a copy of ctx whose ShutdownRequested channel
// is ch.
func ContextWithShutdown(ctx context.Context, ch <-chan struct{}) context.Context {
	return context.WithValue(ctx, shutdownKey{}, ch)
}

// ShutdownRequested returns the channel closed when a graceful shutdown
// begins, nil outside a run.
func ShutdownRequested(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(shutdownKey{}).(<-chan struct{})
	return ch
}

// ParamsFromContext returns the parameters of the run ctx belongs to.
func ParamsFromContext(ctx context.Context) map[string]string {
	p, _ := ctx.Value(paramsKey{}).(map[string]string)
	return p
}

// ContextWithParams returns a copy of ctx carrying params.
func ContextWithParams(ctx context.Context, params map[string]string) context.Context {
	return context.WithValue(ctx, paramsKey{}, params)
}
