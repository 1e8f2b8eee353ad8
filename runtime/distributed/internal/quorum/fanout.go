package quorum

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// nodeReply is one quorum node's answer to a request.
type nodeReply[T any] struct {
	node *Node
	val  T
	err  error
}

// fanOut sends op to every quorum node at once, each request bounded by the
// node timeout and by ctx's deadline, and gathers the replies until decided
// says the outcome is known, every node answered, or ctx is done. Requests
// still in flight then finish in the background within their own timeout;
// their nodes' health is recorded all the same.
//
// Returning as soon as the outcome is known is what keeps a stalled node
// from stretching an operation: with a majority in hand, nobody waits for it.
func fanOut[T any](ctx context.Context, b *Backend, op func(context.Context, *Node) (T, error), decided func([]nodeReply[T]) bool) []nodeReply[T] {
	got, _ := fanOutRest(ctx, b, op, decided)
	return got
}

// fanOutRest is fanOut that also returns a function waiting for the replies
// it did not wait for (each still bounded by its timeout), for callers that
// must not act on a node before its request ended.
func fanOutRest[T any](ctx context.Context, b *Backend, op func(context.Context, *Node) (T, error), decided func([]nodeReply[T]) bool) ([]nodeReply[T], func() []nodeReply[T]) {
	return fanOutTo(ctx, b, b.nodes, op, decided)
}

// fanOutTo is fanOutRest on some of the nodes.
func fanOutTo[T any](ctx context.Context, b *Backend, nodes []*Node, op func(context.Context, *Node) (T, error), decided func([]nodeReply[T]) bool) ([]nodeReply[T], func() []nodeReply[T]) {
	timeout := b.nodeTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	// Detached from ctx's cancellation: an abandoned request must not leave
	// its pooled connection half-read; the timeout still bounds it. One
	// timer serves every node; the last request to end releases it.
	shared := newSharedTimeout(context.WithoutCancel(ctx), timeout, len(nodes))
	ch := make(chan nodeReply[T], len(nodes))
	for _, n := range nodes {
		b.tasks.Run(func() {
			v, err := op(shared.ctx, n)
			shared.done()
			b.observe(n, err)
			ch <- nodeReply[T]{node: n, val: v, err: err}
		})
	}
	got := make([]nodeReply[T], 0, len(nodes))
	rest := func() []nodeReply[T] {
		more := make([]nodeReply[T], 0, len(nodes)-len(got))
		for range len(nodes) - len(got) {
			more = append(more, <-ch)
		}
		return more
	}
	for len(got) < len(nodes) {
		select {
		case r := <-ch:
			got = append(got, r)
			if decided != nil && decided(got) {
				return got, rest
			}
		case <-ctx.Done():
			return got, rest
		}
	}
	return got, rest
}

// nodeErrors describes the failed replies, one clause per node, for error
// messages; nodes that did not answer in time are named too.
func nodeErrors[T any](b *Backend, got []nodeReply[T]) string {
	answered := make([]bool, len(b.nodes))
	var parts []string
	for _, r := range got {
		answered[r.node.index] = true
		if r.err != nil {
			parts = append(parts, fmt.Sprintf("%s: %s", r.node.describe(), b.s.Redactor.Redact(r.err.Error())))
		}
	}
	for i, ok := range answered {
		if !ok {
			parts = append(parts, fmt.Sprintf("%s: no answer yet", b.nodes[i].describe()))
		}
	}
	return strings.Join(parts, "; ")
}

// sharedTimeout is one timeout context for n requests; the last of them to
// end releases its timer.
type sharedTimeout struct {
	ctx     context.Context
	cancel  context.CancelFunc
	running atomic.Int32
}

func newSharedTimeout(parent context.Context, timeout time.Duration, n int) *sharedTimeout {
	st := &sharedTimeout{}
	st.ctx, st.cancel = context.WithTimeout(parent, timeout)
	st.running.Store(int32(n))
	return st
}

// done records the end of one request.
func (st *sharedTimeout) done() {
	if st.running.Add(-1) == 0 {
		st.cancel()
	}
}
