package distributed

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// singleBackend keeps every lease on the primary Redis. Acquire, release,
// complete and validate are one round trip each; renew is one pipelined round
// trip for all leases.
type singleBackend struct {
	client redis.UniversalClient
	keys   *leasebackend.KeyCache // lease, token, done and once keys per pipeline
	s      settings

	// Boxed once: the per-call allocations of arguments are a measurable
	// part of a cycle.
	ttlArg, stateTTLArg, recordTTLArg any

	// registry is the worker record key prefix the acquire script checks a
	// holder's record under, for takeover (see takeover.go); "" keeps to
	// the lease TTL.
	registry    string
	registryArg any // registry, boxed once
	// cluster: the keys are spread over a Redis Cluster, whose scripts
	// reach neither the worker records nor a server-wide epoch.
	cluster bool
}

// newSingleBackend returns a backend on client; keys may be shared with
// another backend on the same primary and prefix (nil: a new cache).
func newSingleBackend(client redis.UniversalClient, s settings, keys *leasebackend.KeyCache) *singleBackend {
	if keys == nil {
		keys = leasebackend.NewKeyCache(primaryKeys(s.KeyPrefix))
	}
	b := &singleBackend{
		client: client, keys: keys, s: s,
		ttlArg:       s.LeaseTTL.Milliseconds(),
		stateTTLArg:  s.FencingKeyTTL.Milliseconds(),
		recordTTLArg: s.recordTTL.Milliseconds(),
	}
	// The script reads the holder's record by a key it is not passed, which
	// only one server holding every key allows.
	if _, cluster := client.(*redis.ClusterClient); !cluster {
		b.registry = keysFor(s).worker("")
		b.registryArg = b.registry
	} else {
		b.cluster = true
	}
	return b
}

// primaryKeys builds a pipeline's keys on the primary under prefix.
func primaryKeys(prefix string) func(pipelineID string) []string {
	return keys{prefix: prefix}.pipelineKeys
}

// pipelineKeys returns the lease, token, done, backfill, once and epoch
// keys of a pipeline (keys.pipelineKeys).
func (b *singleBackend) pipelineKeys(pipelineID string) []string { return b.keys.Get(pipelineID) }

// prepare loads the scripts on every master of a cluster: SCRIPT LOAD has
// no key, so through a ClusterClient it would reach one node.
func (b *singleBackend) prepare(ctx context.Context) error {
	return forEachPrimaryNode(ctx, b.client, func(ctx context.Context, node redis.Cmdable) error {
		return leasebackend.LoadScripts(ctx, node, leasebackend.PrimaryScripts)
	})
}

// ping asks every master of a cluster: a shard that is down cannot grant
// the leases of its pipelines.
func (b *singleBackend) ping(ctx context.Context) error {
	return forEachPrimaryNode(ctx, b.client, func(ctx context.Context, node redis.Cmdable) error {
		return node.Ping(ctx).Err()
	})
}

func (b *singleBackend) status() any { return nil }

func (b *singleBackend) close() error { return nil }

func (b *singleBackend) acquire(ctx context.Context, req leaseRequest) (acquireResult, error) {
	keys, args := b.acquireCall([]leaseRequest{req})
	replies, err := acquireReplies(leasebackend.AcquireScript.Run(ctx, b.client, keys, args...), 1)
	if err != nil {
		return acquireResult{}, err
	}
	return parseReply(replies[0], req, b.s)
}

// acquireReplies reads the acquire script's answer to n requests: one
// reply for one request, an array of n for more. A reply is an integer, or
// a string for a pipeline with failures recorded (parseFailingReply).
func acquireReplies(cmd *redis.Cmd, n int) ([]any, error) {
	if n == 1 {
		v, err := cmd.Result()
		return []any{v}, err
	}
	replies, err := cmd.Slice()
	if err == nil && len(replies) != n {
		err = fmt.Errorf("distributed: the acquire script answered %d replies to %d requests", len(replies), n)
	}
	return replies, err
}

// parseReply decodes one of the acquire script's replies.
func parseReply(reply any, req leaseRequest, s settings) (acquireResult, error) {
	switch v := reply.(type) {
	case int64:
		return parseAcquireReply(v, req, s)
	case string:
		return parseFailingReply(v, req, s)
	}
	return acquireResult{}, fmt.Errorf("distributed: malformed reply %v from the acquire script", reply)
}

// acquireCall returns the acquire script's keys and arguments for reqs,
// which share an owner (one coordinator's).
func (b *singleBackend) acquireCall(reqs []leaseRequest) ([]string, []any) {
	registry, own, refresh := any(""), any(""), any("0")
	if b.registry != "" {
		registry = b.registryArg
	}
	if !b.cluster {
		for _, req := range reqs {
			if req.RecordKey != nil {
				own = req.RecordKey
			}
			if req.Refresh {
				refresh = b.recordTTLArg
			}
		}
	}
	if len(reqs) == 1 {
		// The common case alone, without the copies a batch needs.
		req := reqs[0]
		return b.requestKeys(req), []any{req.Owner, b.ttlArg, b.stateTTLArg, registry, own, refresh, modeArg(req)}
	}
	keys := make([]string, 0, 4*len(reqs))
	for _, req := range reqs {
		keys = append(keys, b.requestKeys(req)...)
	}
	args := make([]any, 0, 6+len(reqs))
	args = append(args, reqs[0].Owner, b.ttlArg, b.stateTTLArg, registry, own, refresh)
	for _, req := range reqs {
		args = append(args, modeArg(req))
	}
	return keys, args
}

// modeArg is req's run number as the acquire script reads it: a slot with
// "r" when it asks to hear of an interrupted earlier slot, with "a" when it
// is asked ahead of its boundary.
func modeArg(req leaseRequest) any {
	switch {
	case req.Mode <= 0:
	case req.Counted:
		// A counted run, "c": none of the slot rules (see run_number.go).
		return strconv.FormatInt(req.Mode, 10) + "c"
	case req.Rerun:
		return strconv.FormatInt(req.Mode, 10) + "r"
	case req.Ahead:
		return strconv.FormatInt(req.Mode, 10) + "a"
	}
	return req.Mode
}

// requestKeys returns the keys the acquire script reads for req: on one
// server the lease, token and done keys, the backfill hash unless req is
// asked ahead of its slot, and the once marker only for a Once request
// (every key passed costs the server a little); on a Cluster all six, the
// last being the pipeline's own state epoch.
func (b *singleBackend) requestKeys(req leaseRequest) []string {
	k := b.pipelineKeys(req.PipelineID)
	switch {
	case b.cluster:
		return k
	case req.Mode == runtime.RunNumberOnce:
		return k[:5]
	case askedAhead(req):
		return k[:3]
	default:
		return k[:4]
	}
}

// askedAhead reports whether modeArg marks req "a" (asked ahead).
func askedAhead(req leaseRequest) bool {
	return req.Mode > 0 && !req.Counted && !req.Rerun && req.Ahead
}

// parseAcquireReply decodes the acquire script's reply: the new token, 0 for
// held, -1 for a completed slot, -2 for a missing worker record, -3 for a
// slot older than the state epoch, -4 for an Ahead request that decided
// nothing (ask again at the boundary), -5 for a slot ahead of the server's
// clock, -6 for a lease or token key holding data agora did not write,
// below -6 (with "r") an interrupted earlier slot.
func parseAcquireReply(reply int64, req leaseRequest, s settings) (acquireResult, error) {
	mode := req.Mode
	switch {
	case reply > 0:
		run := mode
		if mode <= 0 {
			// Auto and Once runs are numbered by their token.
			run = reply
		}
		return acquireResult{Outcome: outcomeAcquired, Token: reply, RunNumber: run, ValidFor: s.LeaseTTL}, nil
	case reply == 0:
		return acquireResult{Outcome: outcomeHeld}, nil
	case reply == -1:
		return acquireResult{Outcome: outcomeSlotCompleted}, nil
	case reply == -2:
		return acquireResult{Outcome: outcomeUnregistered}, nil
	case reply == -3:
		return acquireResult{Outcome: outcomeStateLost}, nil
	case reply == -4 && req.Ahead:
		return acquireResult{Outcome: outcomeAskAtSlot}, nil
	// -5 and -6 come before an interrupted slot: no slot scheduled 6 s
	// after the Unix epoch is ever interrupted.
	case reply == -5:
		return acquireResult{Outcome: outcomeFuture}, nil
	case reply == -6:
		return acquireResult{Outcome: outcomeForeignData}, nil
	case reply < -3 && req.Rerun:
		return acquireResult{Outcome: outcomeInterrupted, RunNumber: -reply}, nil
	default:
		return acquireResult{}, fmt.Errorf("distributed: malformed reply %d from the acquire script", reply)
	}
}

func (b *singleBackend) renew(ctx context.Context, refs []leaseRef) []renewResult {
	out, _ := b.renewAfter(ctx, nil, refs)
	return out
}

// renewAfter renews refs in one pipelined round trip that first runs
// first, when not nil (the worker record's refresh), and returns its error.
func (b *singleBackend) renewAfter(ctx context.Context, first *leasebackend.Call, refs []leaseRef) ([]renewResult, error) {
	calls := make([]leasebackend.Call, 0, len(refs)+1)
	if first != nil {
		calls = append(calls, *first)
	}
	for _, ref := range refs {
		calls = append(calls, leasebackend.Call{
			Script: leasebackend.RenewScript,
			Keys:   b.pipelineKeys(ref.PipelineID)[:1],
			Args:   []any{ref.value(), b.ttlArg},
		})
	}
	cmds := leasebackend.RunPipelined(ctx, b.client, calls)
	var firstErr error
	if first != nil {
		firstErr = cmds[0].Err()
		cmds = cmds[1:]
	}
	out := make([]renewResult, len(refs))
	for i, cmd := range cmds {
		n, err := cmd.Int64()
		if err != nil {
			out[i] = renewResult{Err: err}
			continue
		}
		out[i] = renewResult{Held: n == 1, ValidFor: b.s.LeaseTTL}
	}
	return out, firstErr
}

// release is a compare-and-delete without a script: the lease is a list
// holding its one value, and LREM removes that value only if it is exactly
// this owner's with this token; the emptied list disappears, which frees
// the lease. One plain command costs Redis a fraction of a script run.
func (b *singleBackend) release(ctx context.Context, ref leaseRef) (bool, error) {
	n, err := b.client.LRem(ctx, b.pipelineKeys(ref.PipelineID)[0], 1, ref.value()).Result()
	return n == 1, err
}

// complete records a successful run and then releases its lease (see
// queueRecord).
func (b *singleBackend) complete(ctx context.Context, ref leaseRef) (bool, error) {
	r := finishReq{ref: ref, completed: true}
	cmds, err := b.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		_ = b.queueRecord(ctx, p, r)
		return nil
	})
	if err = firstErr(cmds, err); err != nil {
		return false, err
	}
	return b.release(ctx, ref)
}

// queueRecord queues on p what records a completed run, with plain
// commands and no script: the slot by ZADD … GT, which never lowers the
// mark, so slots finishing out of order need no read; a Once run by its
// marker. The lease is released only once the record went through, in a
// later round trip: so the lease is held until the run is recorded, and no
// contender can acquire in between and find the slot not yet done. That
// includes a Redis out of memory (maxmemory with noeviction), which refuses
// the ZADD but would still run an LREM (a command that frees memory): the
// lease is kept, and the completion retried. The run is recorded even when
// the lease was lost meanwhile: it did complete, and the record only ever
// stops a repeat.
func (b *singleBackend) queueRecord(ctx context.Context, p redis.Pipeliner, r finishReq) []redis.Cmder {
	keys := b.pipelineKeys(r.ref.PipelineID)
	var cmds []redis.Cmder
	inSlotZAdd := false
	switch {
	case r.ref.Mode > 0:
		members := []redis.Z{{Score: float64(r.ref.Mode), Member: doneMember}}
		if r.hist != nil {
			// The run's history record rides on the slot's ZADD (GT only
			// guards existing members): no extra command.
			members = append(members, redis.Z{Score: r.hist.score, Member: r.hist.member})
			inSlotZAdd = true
		}
		cmds = append(cmds, p.ZAddGT(ctx, keys[2], members...))
		if b.s.FencingKeyTTL > 0 {
			cmds = append(cmds, p.PExpire(ctx, keys[2], b.s.FencingKeyTTL), p.PExpire(ctx, keys[1], b.s.FencingKeyTTL))
		}
	case r.ref.Mode == runtime.RunNumberOnce:
		cmds = append(cmds, p.Set(ctx, keys[4], "1", b.s.onceTTL))
	}
	if r.hist != nil {
		// History is kept on a best-effort basis: its own commands do not
		// hold the lease back.
		queueHistory(ctx, p, keys[2], r.hist, inSlotZAdd)
	}
	if r.ref.failures > 0 {
		// A success after failed runs: the count starts again.
		b.queueFailClear(ctx, p, r.ref.PipelineID)
	}
	return cmds
}

// queueFail queues fail.lua's call that records r's failed run and
// releases its lease, after the run's history record.
func (b *singleBackend) queueFail(ctx context.Context, p redis.Pipeliner, r finishReq) *redis.Cmd {
	if r.hist != nil {
		queueHistory(ctx, p, b.pipelineKeys(r.ref.PipelineID)[2], r.hist, false)
	}
	call := b.failCall(r.ref, r.fail)
	return call.Script.EvalSha(ctx, p, call.Keys, call.Args...)
}

// queueRelease queues the LREM that releases r's lease, after the run's
// history record for a run that did not complete (a completed one's went
// with queueRecord); the LREM's count says whether the lease was still
// this owner's.
func (b *singleBackend) queueRelease(ctx context.Context, p redis.Pipeliner, r finishReq) *redis.IntCmd {
	keys := b.pipelineKeys(r.ref.PipelineID)
	if r.hist != nil && !r.completed {
		queueHistory(ctx, p, keys[2], r.hist, false)
	}
	return p.LRem(ctx, keys[0], 1, r.ref.value())
}

// firstErr returns the first error of cmds, or err.
func firstErr(cmds []redis.Cmder, err error) error {
	for _, c := range cmds {
		if c.Err() != nil {
			return c.Err()
		}
	}
	return err
}

func (b *singleBackend) validate(ctx context.Context, pipelineID string, token int64) (bool, error) {
	v, err := b.client.LIndex(ctx, b.pipelineKeys(pipelineID)[0], 0).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	held, err := leasebackend.LeaseToken(v)
	if err != nil {
		return false, fmt.Errorf("distributed: lease of %q: %w", pipelineID, err)
	}
	return held == token, nil
}
