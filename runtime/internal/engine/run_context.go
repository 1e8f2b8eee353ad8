package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// runContext is the context of one run: it carries the lease and answers
// ShutdownRequested with its runner's stop channel, in a single allocation.
//
// Its cancellation is built lazily: the context.WithCancelCause layer below
// it is made only when the run (or something it calls) looks at Done, Err,
// Cause or derives a context, or when the pool cancels the run. A short run
// that never asks costs one allocation and no cancellation bookkeeping,
// which matters when ten thousand pipelines fire in the same second.
type runContext struct {
	base  context.Context // never cancelled by the pool
	lease Lease
	r     *Runner

	inner atomic.Pointer[cancelLayer]
	cause atomic.Pointer[error] // set by cancel before or without a layer

	records recordTally       // what CountRecords adds to
	params  map[string]string // a trigger's parameters, nil for none
}

type cancelLayer struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// newRunContext returns the context of one run; cancel it with its cancel
// method. When base is never cancelled (the pool passes a context.WithoutCancel
// one), the context is not registered with any parent; the pool then
// cancels runs itself.
func newRunContext(base context.Context, lease Lease, r *Runner) *runContext {
	return &runContext{base: base, lease: lease, r: r}
}

// layer returns the cancellation layer, making it on first use.
func (c *runContext) layer() *cancelLayer {
	if l := c.inner.Load(); l != nil {
		return l
	}
	ctx, cancel := context.WithCancelCause(&valueLayer{c})
	l := &cancelLayer{ctx: ctx, cancel: cancel}
	if !c.inner.CompareAndSwap(nil, l) {
		cancel(nil)
		return c.inner.Load()
	}
	if p := c.cause.Load(); p != nil {
		cancel(*p)
	}
	return l
}

// errCanceled is the cause of a plain cancel, shared so that ending a run
// allocates nothing.
var errCanceled = context.Canceled

// cancel cancels the run with cause (nil means context.Canceled).
func (c *runContext) cancel(cause error) {
	if cause == nil {
		c.cancelWith(&errCanceled)
		return
	}
	p := new(error)
	*p = cause
	c.cancelWith(p)
}

func (c *runContext) cancelWith(p *error) {
	c.cause.CompareAndSwap(nil, p)
	if l := c.inner.Load(); l != nil {
		l.cancel(*p)
	}
}

// cancelled returns the cause the run was cancelled with, or nil, without
// making a layer.
func (c *runContext) cancelled() error {
	if l := c.inner.Load(); l != nil {
		return context.Cause(l.ctx)
	}
	if p := c.cause.Load(); p != nil {
		return *p
	}
	return nil
}

// Deadline is the base's: the pool never sets one.
func (c *runContext) Deadline() (time.Time, bool) { return c.base.Deadline() }

// Done returns a channel closed when the run is cancelled.
func (c *runContext) Done() <-chan struct{} { return c.layer().ctx.Done() }

// Err returns nil until the run is cancelled, then context.Canceled.
func (c *runContext) Err() error {
	if c.inner.Load() == nil && c.cause.Load() == nil && c.base.Err() == nil {
		return nil
	}
	return c.layer().ctx.Err()
}

// Value answers the lease and shutdown keys, and otherwise asks the
// cancellation layer, which answers context.Cause and context.WithCancel
// and passes other keys on to the base.
func (c *runContext) Value(key any) any {
	if _, ok := key.(*int); ok {
		// The context package finds a cancellable parent by an *int key;
		// only the layer can answer it.
		return c.layer().ctx.Value(key)
	}
	return c.value(key)
}

// value answers the lease, shutdown and record-count keys and passes other
// keys on to the base.
func (c *runContext) value(key any) any {
	switch key.(type) {
	case leaseKey:
		return c.lease
	case shutdownKey:
		return c.r.stopChan()
	case recordsKey:
		return &c.records
	case paramsKey:
		if c.params != nil {
			return c.params
		}
	}
	return c.base.Value(key)
}

// String names the context in debug output.
func (c *runContext) String() string { return "runtime.runContext(" + c.lease.PipelineID + ")" }

// valueLayer is the parent of the cancellation layer: the run's values over
// the base, with the base's Done, so a cancellable base still cancels the
// run.
type valueLayer struct{ c *runContext }

func (v *valueLayer) Deadline() (time.Time, bool) { return v.c.base.Deadline() }
func (v *valueLayer) Done() <-chan struct{}       { return v.c.base.Done() }
func (v *valueLayer) Err() error                  { return v.c.base.Err() }

func (v *valueLayer) Value(key any) any { return v.c.value(key) }
