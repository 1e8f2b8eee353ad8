package distributed

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

var _ runtime.BatchLeaser = (*RedisWorkerCoordinator)(nil)

// TryAcquireLeases is TryAcquireLease for many pipelines at once: the
// requests go to Redis in one pipelined round trip (a grant or a refusal
// each, exactly as TryAcquireLease decides it), so a burst of runs due
// together costs a round trip per batch rather than per run. The reply at
// index i answers reqs[i]. The pool calls it for the runs of one dispatch
// batch.
func (c *RedisWorkerCoordinator) TryAcquireLeases(ctx context.Context, reqs []runtime.LeaseRequest) []runtime.LeaseReply {
	out := make([]runtime.LeaseReply, len(reqs))
	asked := make([]leaseRequest, 0, len(reqs))
	at := make([]int, 0, len(reqs))
	ahead := c.LeaseAhead() > 0
	for i, r := range reqs {
		if r.Ahead && (!ahead || runtime.RunKindOf(r.RunNumber) != runtime.RunSlot) {
			out[i].Err = runtime.ErrAskAtSlot
			continue
		}
		req, ok, err := c.beginAcquire(r.PipelineID, r.RunNumber)
		if !ok {
			if r.Ahead && err == nil {
				err = runtime.ErrAskAtSlot // refused locally: held or in hand
			}
			out[i].Err = err
			continue
		}
		if r.Ahead && req.Rerun {
			c.endAcquire(r.PipelineID)
			out[i].Err = runtime.ErrAskAtSlot
			continue
		}
		req.Ahead = r.Ahead
		asked = append(asked, req)
		at = append(at, i)
	}
	if len(asked) == 0 {
		return out
	}
	began := asked
	defer func() {
		for _, req := range began {
			c.endAcquire(req.PipelineID)
		}
	}()

	opCtx, cancel := c.opContext(ctx, opAcquire)
	defer cancel()
	if c.usesPreference() {
		asked, at = c.grantedElsewhere(opCtx, asked, at, out)
		asked, at = c.aheadOnlyLooks(asked, at, out)
	} else {
		asked, at = c.claimSlots(opCtx, asked, at, out)
	}
	if len(asked) == 0 {
		return out
	}
	sent := c.clock.Now()
	results, errs := c.acquireMany(opCtx, asked)
	for j, req := range asked {
		res, err, sentAt := results[j], errs[j], sent
		if err == nil && res.Outcome == outcomeUnregistered {
			sentAt, res, err = c.acquireRegistered(opCtx, req)
		}
		if err == nil && res.Outcome == outcomeInterrupted {
			req, sentAt, res, err = c.acquireInterrupted(opCtx, req, res.RunNumber)
		}
		ok, err := c.settleAcquire(ctx, req, sentAt, res, err)
		out[at[j]] = runtime.LeaseReply{Acquired: ok, Err: err}
	}
	return out
}

// claimTTL is how long a slot's claim lasts. A replica asking later finds
// the lease held or the slot done instead, which the script tells it.
const claimTTL = 5 * time.Second

// claimSlots lets one replica per slot go on to the acquire script on a
// Redis Cluster, where every replica asks at once (see preference.go): each
// cron slot request first sets the slot's claim key with SET NX (one plain
// command, pipelined with the batch's others), and a request that finds
// another owner's claim is refused as held, with no script run. A Cluster
// runs a script call per request, so this turns two of the three per slot
// into plain commands. The claim only filters: the acquire script still
// decides every grant, so a claim can cost a slot only when its owner dies
// between claiming and acquiring, as it could right after acquiring. A claim already this owner's (a retried slot)
// lets it through; so does any failure to claim (the script decides).
// Requests refused here get their reply in out; the rest are returned.
func (c *RedisWorkerCoordinator) claimSlots(ctx context.Context, reqs []leaseRequest, at []int, out []runtime.LeaseReply) ([]leaseRequest, []int) {
	b, ok := c.backend.(*singleBackend)
	if !ok {
		return reqs, at
	}
	ttl := min(claimTTL, c.s.LeaseTTL)
	cmds := make([]*redis.StatusCmd, len(reqs))
	_, _ = b.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, req := range reqs {
			if req.slot() {
				key := c.keys.claim(req.PipelineID, req.Mode)
				cmds[i] = p.SetArgs(ctx, key, req.Owner, redis.SetArgs{Mode: "NX", TTL: ttl, Get: true})
			}
		}
		return nil
	})
	keptReqs, keptAt := reqs[:0:0], at[:0:0]
	for i, req := range reqs {
		if cmd := cmds[i]; cmd != nil {
			// SET … NX GET answers nil (redis.Nil) when it set the claim,
			// and the claim's owner when another had it.
			if holder, err := cmd.Result(); err == nil && holder != req.Owner {
				c.stats.contended.Add(1)
				out[at[i]] = runtime.LeaseReply{}
				continue
			}
		}
		keptReqs, keptAt = append(keptReqs, req), append(keptAt, at[i])
	}
	return keptReqs, keptAt
}

// acquireMany asks the backend for every request: in one pipeline on a
// single Redis, concurrently otherwise.
func (c *RedisWorkerCoordinator) acquireMany(ctx context.Context, reqs []leaseRequest) ([]acquireResult, []error) {
	if b, ok := c.backend.(*singleBackend); ok {
		return b.acquireMany(ctx, reqs)
	}
	results := make([]acquireResult, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = c.backend.acquire(ctx, req)
		}()
	}
	wg.Wait()
	return results, errs
}

// acquireMany decides every request in one round trip. On one server a
// single acquire script call decides them all, so the batch pays for one
// script call and one clock reading; on a Cluster, whose script calls must
// keep to one hash slot, each request is its own call in one pipeline
// (which the client splits by node).
func (b *singleBackend) acquireMany(ctx context.Context, reqs []leaseRequest) ([]acquireResult, []error) {
	if _, cluster := b.client.(*redis.ClusterClient); cluster {
		return b.acquireBySlot(ctx, reqs)
	}
	var groups [][]leaseRequest
	for from := 0; from < len(reqs); from += maxAcquireBatch {
		groups = append(groups, reqs[from:min(from+maxAcquireBatch, len(reqs))])
	}
	calls := make([]leasebackend.Call, len(groups))
	for i, g := range groups {
		keys, args := b.acquireCall(g)
		calls[i] = leasebackend.Call{Script: leasebackend.AcquireScript, Keys: keys, Args: args}
	}
	cmds := leasebackend.RunPipelined(ctx, b.client, calls)
	results := make([]acquireResult, 0, len(reqs))
	errs := make([]error, 0, len(reqs))
	for i, cmd := range cmds {
		replies, err := acquireReplies(cmd, len(groups[i]))
		for j, req := range groups[i] {
			if err != nil {
				results, errs = append(results, acquireResult{}), append(errs, err)
				continue
			}
			res, perr := parseReply(replies[j], req, b.s)
			results, errs = append(results, res), append(errs, perr)
		}
	}
	return results, errs
}

// maxAcquireBatch bounds the requests one acquire script call decides: the
// script runs atomically, so a call blocks the server for its whole batch.
const maxAcquireBatch = 128

// acquireBySlot is acquireMany on a Cluster, whose script calls must keep
// to one hash slot: the requests whose keys share a slot (every key of a
// pipeline carries its {id} tag) go to one acquire call, up to
// maxAcquireBatch, and the calls go in one pipeline, which the client
// splits by node. The replies come back in the order of reqs.
func (b *singleBackend) acquireBySlot(ctx context.Context, reqs []leaseRequest) ([]acquireResult, []error) {
	var groups [][]int // indexes into reqs
	bySlot := make(map[uint16]int, len(reqs))
	for i, req := range reqs {
		slot := leasebackend.HashSlot(b.keys.Get(req.PipelineID)[0])
		g, ok := bySlot[slot]
		if !ok || len(groups[g]) == maxAcquireBatch {
			g = len(groups)
			bySlot[slot] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	calls := make([]leasebackend.Call, len(groups))
	batch := make([]leaseRequest, 0, len(reqs))
	for i, g := range groups {
		batch = batch[:0]
		for _, j := range g {
			batch = append(batch, reqs[j])
		}
		keys, args := b.acquireCall(batch)
		calls[i] = leasebackend.Call{Script: leasebackend.AcquireScript, Keys: keys, Args: args}
	}
	cmds := leasebackend.RunPipelined(ctx, b.client, calls)
	results := make([]acquireResult, len(reqs))
	errs := make([]error, len(reqs))
	for i, cmd := range cmds {
		replies, err := acquireReplies(cmd, len(groups[i]))
		for k, j := range groups[i] {
			if err != nil {
				errs[j] = err
				continue
			}
			results[j], errs[j] = parseReply(replies[k], reqs[j], b.s)
		}
	}
	return results, errs
}
