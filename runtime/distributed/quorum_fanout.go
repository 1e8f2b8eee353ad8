package distributed

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// nodeReply is one quorum node's answer to a request.
type nodeReply[T any] struct {
	node *quorumNode
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
func fanOut[T any](ctx context.Context, b *quorumBackend, op func(context.Context, *quorumNode) (T, error), decided func([]nodeReply[T]) bool) []nodeReply[T] {
	timeout := b.nodeTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	// Detached from ctx's cancellation: an abandoned request must not leave
	// its pooled connection half-read; the timeout still bounds it.
	base := context.WithoutCancel(ctx)
	ch := make(chan nodeReply[T], len(b.nodes))
	for _, n := range b.nodes {
		go func() {
			nctx, cancel := context.WithTimeout(base, timeout)
			v, err := op(nctx, n)
			cancel()
			b.observe(n, err)
			ch <- nodeReply[T]{node: n, val: v, err: err}
		}()
	}
	got := make([]nodeReply[T], 0, len(b.nodes))
	for len(got) < len(b.nodes) {
		select {
		case r := <-ch:
			got = append(got, r)
			if decided != nil && decided(got) {
				return got
			}
		case <-ctx.Done():
			return got
		}
	}
	return got
}

// nodeErrors describes the failed replies, one clause per node, for error
// messages; nodes that did not answer in time are named too.
func nodeErrors[T any](b *quorumBackend, got []nodeReply[T]) string {
	answered := make([]bool, len(b.nodes))
	var parts []string
	for _, r := range got {
		answered[r.node.index] = true
		if r.err != nil {
			parts = append(parts, fmt.Sprintf("%s: %s", r.node.describe(), b.s.redactor.redact(r.err.Error())))
		}
	}
	for i, ok := range answered {
		if !ok {
			parts = append(parts, fmt.Sprintf("%s: no answer yet", b.nodes[i].describe()))
		}
	}
	return strings.Join(parts, "; ")
}
