package runtime

import "context"

// runValues is the context value layer of one run: the lease and the
// shutdown channel answered by LeaseFromContext and ShutdownRequested, in a
// single allocation. Other keys go to the parent.
type runValues struct {
	context.Context
	lease    Lease
	shutdown <-chan struct{}
}

func (v *runValues) Value(key any) any {
	switch key.(type) {
	case leaseKey:
		return v.lease
	case shutdownKey:
		return v.shutdown
	}
	return v.Context.Value(key)
}

// newRunContext returns the context of one run. When parent is never
// cancelled (the pool passes a context.WithoutCancel parent), the new context
// is not registered with any parent, which keeps starting a run cheap; the
// pool then cancels runs itself through the returned function.
func newRunContext(parent context.Context, lease Lease, shutdown <-chan struct{}) (context.Context, context.CancelCauseFunc) {
	return context.WithCancelCause(&runValues{Context: parent, lease: lease, shutdown: shutdown})
}
