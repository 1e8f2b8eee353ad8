package quorum

import (
	"context"
	"fmt"
	"time"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// renewCodes are one node's answers to a renewal round, one per lease.
type renewCodes struct {
	codes []int64 // 1 extended, 2 put back, 0 gone or held by another
	errs  []error
}

// Renewal is the answer for one lease of a renewal round.
type Renewal struct {
	Held     bool          // extended; false with a nil Err means lost at once
	ValidFor time.Duration // validity counted from when the round was sent
	Err      error         // transport failure: retry until the deadline
}

// Renew extends every lease in refs on every quorum node, one pipelined
// round trip per node, all nodes at once. A lease survives when a majority
// extended it within the validity window; it is lost at once when so many
// nodes say it is gone that no majority is possible; otherwise the round
// failed and the coordinator retries until the renewal deadline.
//
// A node that lost its data since the lease was set (a restart without
// persistence) gets the lease back when nobody else came by meanwhile, so a
// long lease outlives quorum nodes restarted one after another.
func (b *Backend) Renew(ctx context.Context, refs []Lease) []Renewal {
	start := time.Now()

	ttl := b.s.LeaseTTL.Milliseconds()
	calls := make([]leasebackend.Call, len(refs))
	for i, ref := range refs {
		calls[i] = leasebackend.Call{
			Script: leasebackend.QuorumRenewScript,
			Keys:   b.nodeKeys.Get(ref.PipelineID),
			Args:   []any{nodeValue(ref), ttl, ref.Mode},
		}
	}
	n := len(b.nodes)
	got := fanOut(ctx, b, func(ctx context.Context, node *Node) (renewCodes, error) {
		cmds := leasebackend.RunPipelined(ctx, node.client, calls)
		out := renewCodes{codes: make([]int64, len(cmds)), errs: make([]error, len(cmds))}
		var first error
		for i, cmd := range cmds {
			out.codes[i], out.errs[i] = cmd.Int64()
			if out.errs[i] != nil && first == nil {
				first = out.errs[i]
			}
			if out.errs[i] == nil && out.codes[i] == 2 {
				// Counted here: a decided round does not wait for this node.
				b.reseated.Add(1)
				b.log.Info("distributed: lease put back on a Redlock node that had lost it",
					"pipeline", refs[i].PipelineID, "token", refs[i].Token, "node", node.index, "redis", node.url.Redacted)
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

	out := make([]Renewal, len(refs))
	for i, ref := range refs {
		ext, gone := tallyRenew(got, i)
		switch {
		case ext >= b.quorum && elapsed < b.validity:
			out[i] = Renewal{Held: true, ValidFor: b.validity}
		case gone > n-b.quorum:
			b.lostRenewals.Add(1)
			out[i] = Renewal{Held: false}
		case ext >= b.quorum:
			out[i] = Renewal{Err: fmt.Errorf("%w: a majority extended the lease of %q only after %s, past its validity of %s",
				ErrNotReached, ref.PipelineID, elapsed.Round(time.Millisecond), b.validity)}
		default:
			out[i] = Renewal{Err: fmt.Errorf("%w: %d of %d nodes extended the lease of %q, %d needed: %s",
				ErrNotReached, ext, n, ref.PipelineID, b.quorum, renewErrors(b, got, i))}
		}
	}
	return out
}

// tallyRenew counts, for lease i, the nodes that extended (or put back) it
// and the nodes that said it is gone.
func tallyRenew(got []nodeReply[renewCodes], i int) (ext, gone int) {
	for _, r := range got {
		if i >= len(r.val.codes) || r.val.errs[i] != nil {
			continue
		}
		switch r.val.codes[i] {
		case 1, 2:
			ext++
		case 0:
			gone++
		}
	}
	return ext, gone
}

// renewErrors describes why lease i was not extended on each node that did
// not extend it.
func renewErrors(b *Backend, got []nodeReply[renewCodes], i int) string {
	per := make([]nodeReply[struct{}], 0, len(got))
	for _, r := range got {
		var err error
		switch {
		case i >= len(r.val.errs):
			err = r.err
		case r.val.errs[i] != nil:
			err = r.val.errs[i]
		case r.val.codes[i] == 0:
			err = fmt.Errorf("lease gone or held by another worker")
		}
		per = append(per, nodeReply[struct{}]{node: r.node, err: err})
	}
	return nodeErrors(b, per)
}
