package transform

import "sync/atomic"

// reusable is scratch space a transform reuses from one record to the
// next instead of allocating it per record. A pipeline applies its
// transforms from one goroutine, so the one value is almost always free;
// when a transform is applied from two goroutines at once (one Transform
// shared by pipelines running together), the second gets a fresh value.
type reusable[T any] struct {
	busy atomic.Bool
	v    T
}

// take returns scratch space, to be given back with give.
func (r *reusable[T]) take() *T {
	if r.busy.CompareAndSwap(false, true) {
		return &r.v
	}
	return new(T)
}

// give gives back what take returned.
func (r *reusable[T]) give(v *T) {
	if v == &r.v {
		r.busy.Store(false)
	}
}
