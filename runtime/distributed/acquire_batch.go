package distributed

import (
	"context"
	"sync"

	"github.com/agora-etl/agora/runtime"
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
	for i, r := range reqs {
		req, ok, err := c.beginAcquire(r.PipelineID, r.RunNumber)
		if !ok {
			out[i].Err = err
			continue
		}
		asked = append(asked, req)
		at = append(at, i)
	}
	if len(asked) == 0 {
		return out
	}
	defer func() {
		for _, req := range asked {
			c.endAcquire(req.PipelineID)
		}
	}()

	opCtx, cancel := c.opContext(ctx)
	defer cancel()
	sent := c.clock.Now()
	results, errs := c.acquireMany(opCtx, asked)
	for j, req := range asked {
		res, err, sentAt := results[j], errs[j], sent
		if err == nil && res.Outcome == outcomeUnregistered {
			sentAt, res, err = c.acquireRegistered(opCtx, req)
		}
		ok, err := c.settleAcquire(ctx, req, sentAt, res, err)
		out[at[j]] = runtime.LeaseReply{Acquired: ok, Err: err}
	}
	return out
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

// acquireMany runs the acquire script for every request in one pipelined
// round trip.
func (b *singleBackend) acquireMany(ctx context.Context, reqs []leaseRequest) ([]acquireResult, []error) {
	calls := make([]scriptCall, len(reqs))
	for i, req := range reqs {
		keys, args := b.acquireCall(req)
		calls[i] = scriptCall{script: acquireScript, keys: keys, args: args}
	}
	cmds := runPipelined(ctx, b.client, calls)
	results := make([]acquireResult, len(reqs))
	errs := make([]error, len(reqs))
	for i, cmd := range cmds {
		reply, err := cmd.Int64()
		if err != nil {
			errs[i] = err
			continue
		}
		results[i], errs[i] = parseAcquireReply(reply, reqs[i].Mode, b.s)
	}
	return results, errs
}
