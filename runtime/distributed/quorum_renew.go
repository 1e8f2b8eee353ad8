package distributed

import (
	"context"
	"fmt"
	"time"
)

// The quorum renew script's answers.
const (
	renewGone     = 0 // gone for good or held by another
	renewExtended = 1
	renewPutBack  = 2 // put back on a node that had lost it
	renewMissing  = 3 // missing here, free to be put back
)

// renewCodes are one node's answers to a renewal round, one per lease.
type renewCodes struct {
	codes []int64
	errs  []error
}

// renew extends every lease in refs on every quorum node, one pipelined
// round trip per node, all nodes at once. A lease survives when a majority
// extended it within the validity window; it is lost at once when so many
// nodes say it is gone that no majority is possible; otherwise the round
// failed and the coordinator retries until the renewal deadline.
//
// A node that lost its data since the lease was set (a restart without
// persistence) and on which nobody else came by meanwhile gets the lease
// back, so a long lease outlives quorum nodes restarted one after another.
// That is a second step (putBack), sent only once a majority has extended
// the lease in this round: a renewal that waited at a stalled server and
// runs after the holder gave the lease up finds it missing and leaves it so.
func (b *quorumBackend) renew(ctx context.Context, refs []leaseRef) []renewResult {
	start := time.Now()

	calls := b.renewCalls(refs, false)
	n := len(b.nodes)
	got := fanOut(ctx, b, func(ctx context.Context, node *quorumNode) (renewCodes, error) {
		cmds := runPipelined(ctx, node.client, calls)
		out := renewCodes{codes: make([]int64, len(cmds)), errs: make([]error, len(cmds))}
		var first error
		for i, cmd := range cmds {
			out.codes[i], out.errs[i] = cmd.Int64()
			if out.errs[i] != nil && first == nil {
				first = out.errs[i]
			}
		}
		return out, first
	}, func(got []nodeReply[renewCodes]) bool {
		for i := range refs {
			ext, gone := tallyRenew(got, i)
			if ext < b.quorum && gone <= n-b.quorum {
				return false
			}
		}
		return true
	})
	elapsed := time.Since(start)

	out := make([]renewResult, len(refs))
	held := make([]bool, len(refs))
	for i, ref := range refs {
		ext, gone := tallyRenew(got, i)
		switch {
		case ext >= b.quorum && elapsed < b.validity:
			out[i] = renewResult{Held: true, ValidFor: b.validity}
			held[i] = true
		case gone > n-b.quorum:
			b.lostRenewals.Add(1)
			out[i] = renewResult{Held: false}
		case ext >= b.quorum:
			out[i] = renewResult{Err: fmt.Errorf("%w: a majority extended the lease of %q only after %s, past its validity of %s",
				ErrQuorumNotReached, ref.PipelineID, elapsed.Round(time.Millisecond), b.validity)}
		default:
			out[i] = renewResult{Err: fmt.Errorf("%w: %d of %d nodes extended the lease of %q, %d needed: %s",
				ErrQuorumNotReached, ext, n, ref.PipelineID, b.quorum, renewErrors(b, got, i))}
		}
	}
	b.putBack(refs, held, got)
	return out
}

// renewCalls returns the renew script call for each lease; putBack asks
// the nodes to put a missing lease back instead of only saying so.
func (b *quorumBackend) renewCalls(refs []leaseRef, putBack bool) []scriptCall {
	ttl, flag := b.s.LeaseTTL.Milliseconds(), 0
	if putBack {
		flag = 1
	}
	calls := make([]scriptCall, len(refs))
	for i, ref := range refs {
		calls[i] = scriptCall{
			script: quorumRenewScript,
			keys:   b.nodeKeys.get(ref.PipelineID),
			args:   []any{nodeValue(ref), ttl, ref.Mode, flag},
		}
	}
	return calls
}

// putBack re-seats, in the background, each lease a majority has just
// extended (held) on the nodes of got that answered it was missing. The
// script checks again that nobody took, released or completed it there.
func (b *quorumBackend) putBack(refs []leaseRef, held []bool, got []nodeReply[renewCodes]) {
	for _, r := range got {
		var missing []leaseRef
		for i, ref := range refs {
			if held[i] && i < len(r.val.codes) && r.val.errs[i] == nil && r.val.codes[i] == renewMissing {
				missing = append(missing, ref)
			}
		}
		if len(missing) == 0 {
			continue
		}
		node := r.node
		b.background(func() {
			ctx, cancel := context.WithTimeout(context.Background(), b.nodeTimeout)
			defer cancel()
			for i, cmd := range runPipelined(ctx, node.client, b.renewCalls(missing, true)) {
				if code, err := cmd.Int64(); err == nil && code == renewPutBack {
					b.reseated.Add(1)
					b.log.Info("distributed: lease put back on a Redlock node that had lost it",
						"pipeline", missing[i].PipelineID, "token", missing[i].Token, "node", node.index, "redis", node.url.redacted)
				}
			}
		})
	}
}

// tallyRenew counts, for lease i, the nodes that extended it and the nodes
// on which it is not: gone, held by another, or missing (a missing lease
// is only put back after the round, so it does not count towards one).
func tallyRenew(got []nodeReply[renewCodes], i int) (ext, gone int) {
	for _, r := range got {
		if i >= len(r.val.codes) || r.val.errs[i] != nil {
			continue
		}
		switch r.val.codes[i] {
		case renewExtended, renewPutBack:
			ext++
		case renewGone, renewMissing:
			gone++
		}
	}
	return ext, gone
}

// renewErrors describes why lease i was not extended on each node that did
// not extend it.
func renewErrors(b *quorumBackend, got []nodeReply[renewCodes], i int) string {
	per := make([]nodeReply[struct{}], 0, len(got))
	for _, r := range got {
		var err error
		switch {
		case i >= len(r.val.errs):
			err = r.err
		case r.val.errs[i] != nil:
			err = r.val.errs[i]
		case r.val.codes[i] == renewGone:
			err = fmt.Errorf("lease gone or held by another worker")
		case r.val.codes[i] == renewMissing:
			err = fmt.Errorf("lease missing (the node lost it)")
		}
		per = append(per, nodeReply[struct{}]{node: r.node, err: err})
	}
	return nodeErrors(b, per)
}
