package distributed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
	"github.com/agora-etl/agora/runtime/history"
)

// A pipeline's fleet-wide failure state (runtime.FailureSharer) lives with
// its coordination state: the consecutive failed runs and the backoff
// deadline are two members of its completed-slot sorted set, "fails" and
// "fail_until", so the acquire script reads them in the ZMSCORE that reads
// the slot, at no extra command; the last error is in the failure record
// (keys.failure), read only once a lease is refused for it. A failed run's
// lease is given back by fail.lua, which records the failure in the same
// step (so no replica finds the lease free before the backoff is in
// place); a success after failures clears the state in the round trip that
// records the slot, while the lease is still held. A success with no
// failure recorded sends nothing more.
//
// Both members are scored failBand plus their value, above every slot
// (Unix s) and run record (Unix ms), so the run history never reads them;
// "fail_until" is the deadline in Redis time (Unix ms), or failBand itself
// once the count reached MaxConsecutiveErrors: the pipeline stopped, and
// every replica asking is refused and stops it too. A worker that starts
// clears a stopped state of its pipelines (fail_reset.lua): it begins a new
// count, as a restarted process does; a count still running is joined.
const failBand = 1 << 52

// Members of the completed-slot set that hold the failure state.
const (
	failsMember     = "fails"
	failUntilMember = "fail_until"
)

var _ runtime.FailureSharer = (*RedisWorkerCoordinator)(nil)

// failReq asks fail.lua to record a failed run while giving its lease back.
type failReq struct {
	rules runtime.FailureRules
	err   string
}

// failRep is what fail.lua answered.
type failRep struct {
	count int
	wait  time.Duration // the backoff; < 0 when the pipeline stopped
}

// ShareFailures keeps each pipeline's failure rules, which fail.lua applies
// when a run of it fails. Pipelines without rules (never shared) keep the
// pool's own count.
func (c *RedisWorkerCoordinator) ShareFailures(rules map[string]runtime.FailureRules) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failRules = make(map[string]runtime.FailureRules, len(rules))
	for id, r := range rules {
		c.failRules[id] = r
	}
}

// Failures returns the failure state recorded when this worker last gave a
// failed run's lease of pipelineID back.
func (c *RedisWorkerCoordinator) Failures(pipelineID string) (runtime.FailureState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.failSeen[pipelineID]
	return st, ok
}

// failFor returns what fail.lua needs to record rec's failure, nil when the
// run does not count: a success, a slot done elsewhere, a triggered run (an
// operator's, beside the schedule, as the pool counts it) or a pipeline
// without shared rules. It forgets the state learned from the last failure;
// c.mu is held.
func (c *RedisWorkerCoordinator) failFor(rec *history.Record) *failReq {
	if rec == nil {
		return nil
	}
	delete(c.failSeen, rec.PipelineID)
	rules, ok := c.failRules[rec.PipelineID]
	if !ok || rec.Triggered || rec.Outcome == history.OutcomeSucceeded || rec.Outcome == history.OutcomeSlotDone {
		return nil
	}
	return &failReq{rules: rules, err: rec.Error}
}

// noteFailure keeps the state fail.lua answered for pipelineID, for the
// pool's Failures call, sent at sent.
func (c *RedisWorkerCoordinator) noteFailure(pipelineID string, rep failRep, lastErr string, sent time.Time) {
	if rep.count == 0 {
		return // the lease was another run's: nothing recorded
	}
	st := runtime.FailureState{Count: rep.count, LastError: lastErr, Stopped: rep.wait < 0}
	if rep.wait >= 0 {
		st.Until = sent.Add(rep.wait)
	}
	c.mu.Lock()
	if c.failSeen == nil {
		c.failSeen = map[string]runtime.FailureState{}
	}
	c.failSeen[pipelineID] = st
	c.mu.Unlock()
	if st.Stopped {
		c.log.Error("distributed: pipeline reached its maximum of consecutive failed runs in the fleet; every replica stops it",
			"pipeline", pipelineID, "consecutive_errors", rep.count, "last_error", lastErr)
		c.auditStop(pipelineID, rep.count, lastErr)
	}
}

// auditStop appends the fleet-wide stop of pipelineID to the audit log,
// by this worker: fail.lua answers "stopped" to the one failed run that
// reached the maximum (no replica is granted a run afterwards), so the
// stop is recorded once. The release has its own context, already spent
// on the release: the append gets its own timeout.
func (c *RedisWorkerCoordinator) auditStop(pipelineID string, count int, lastErr string) {
	reason := fmt.Sprintf("%d consecutive failed runs", count)
	if lastErr != "" {
		if r := []rune(lastErr); len(r) > 300 {
			lastErr = string(r[:299]) + "…"
		}
		reason += "; last error: " + lastErr
	}
	c.mu.Lock()
	worker := c.workerID
	c.mu.Unlock()
	err := c.AppendAudit(context.Background(), AuditEntry{PipelineID: pipelineID, Action: AuditStop, Actor: "worker " + worker, Reason: reason})
	if err != nil {
		c.log.Warn("distributed: could not record the fleet-wide stop in the audit log", "pipeline", pipelineID, "error", err)
	}
}

// failBackend is where the failure state lives: the one server (or
// Cluster), or in Redlock mode the primary, whose reservation fail.lua
// gives back (the quorum lease is released after it).
func (c *RedisWorkerCoordinator) failBackend() *singleBackend {
	switch b := c.backend.(type) {
	case *singleBackend:
		return b
	case *quorumBackend:
		return b.primary.reserver
	}
	return nil
}

// failCall is fail.lua's call for r's lease.
func (b *singleBackend) failCall(r leaseRef, f *failReq) leasebackend.Call {
	keys := b.pipelineKeys(r.PipelineID)
	base := f.rules.ErrorBackoff
	if base <= 0 {
		base = runtime.DefaultErrorBackoff
	}
	return leasebackend.Call{
		Script: leasebackend.FailScript,
		Keys:   []string{keys[0], keys[2], keysFor(b.s).failure(r.PipelineID)},
		Args: []any{r.value(), base.Milliseconds(), runtime.MaxErrorBackoff.Milliseconds(),
			f.rules.MaxConsecutiveErrors, f.err, r.Owner, b.stateTTLArg},
	}
}

// fail records r's failure and gives its lease back, in one script call.
func (b *singleBackend) fail(ctx context.Context, r leaseRef, f *failReq) (bool, failRep, error) {
	cmd := leasebackend.RunPipelined(ctx, b.client, []leasebackend.Call{b.failCall(r, f)})[0]
	return parseFailReply(cmd)
}

// parseFailReply reads fail.lua's {released, count, wait ms}.
func parseFailReply(cmd *redis.Cmd) (bool, failRep, error) {
	v, err := cmd.Int64Slice()
	if err != nil {
		return false, failRep{}, err
	}
	if len(v) != 3 {
		return false, failRep{}, fmt.Errorf("distributed: the fail script answered %d values, want 3", len(v))
	}
	rep := failRep{count: int(v[1]), wait: -1}
	if v[2] >= 0 {
		rep.wait = time.Duration(v[2]) * time.Millisecond
	}
	return v[0] == 1, rep, nil
}

// queueFailClear queues, for a success after failures, what clears the
// pipeline's failure state: the lease is still held, so no replica sees
// the state between the success and the clear.
func (b *singleBackend) queueFailClear(ctx context.Context, p redis.Pipeliner, pipelineID string) {
	p.ZRem(ctx, b.pipelineKeys(pipelineID)[2], failsMember, failUntilMember)
	p.Del(ctx, keysFor(b.s).failure(pipelineID))
}

// parseFailingReply decodes the acquire script's string replies for a
// pipeline with failures recorded: "g <token> <count>" granted, "b <count>
// <ms left>" refused while backing off, "s <count>" refused because it
// stopped.
func parseFailingReply(reply string, req leaseRequest, s settings) (acquireResult, error) {
	f := strings.Fields(reply)
	bad := fmt.Errorf("distributed: malformed reply %q from the acquire script", reply)
	num := func(i int) int64 {
		if i >= len(f) {
			return -1
		}
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	switch {
	case len(f) == 3 && f[0] == "g" && num(1) > 0 && num(2) > 0:
		res, err := parseAcquireReply(num(1), req, s)
		res.Failures = int(num(2))
		return res, err
	case len(f) == 3 && f[0] == "b" && num(1) > 0 && num(2) >= 0:
		return acquireResult{Outcome: outcomeBackingOff, Failures: int(num(1)), RetryIn: time.Duration(num(2)) * time.Millisecond}, nil
	case len(f) == 2 && f[0] == "s" && num(1) > 0:
		return acquireResult{Outcome: outcomeFailStopped, Failures: int(num(1))}, nil
	}
	return acquireResult{}, bad
}

// failingError is the refusal of req for the pipeline's failure state,
// with the last error read from its failure record (one round trip, on
// this path only), sent at sent.
func (c *RedisWorkerCoordinator) failingError(ctx context.Context, req leaseRequest, res acquireResult, sent time.Time) error {
	st := runtime.FailureState{Count: res.Failures, Stopped: res.Outcome == outcomeFailStopped}
	if !st.Stopped {
		st.Until = sent.Add(res.RetryIn)
	}
	opCtx, cancel := c.opContext(ctx, opInspect)
	last, err := c.client.HGet(opCtx, c.keys.failure(req.PipelineID), "error").Result()
	cancel()
	switch {
	case err == nil:
		st.LastError = last
	case errors.Is(err, redis.Nil):
		st.LastError = "(not recorded)"
	default:
		st.LastError = "(could not be read: " + err.Error() + ")"
	}
	if st.Stopped {
		c.mu.Lock()
		if c.failSeen == nil {
			c.failSeen = map[string]runtime.FailureState{}
		}
		c.failSeen[req.PipelineID] = st
		c.mu.Unlock()
	}
	return &runtime.FailingError{PipelineID: req.PipelineID, State: st}
}

// resetStoppedFailures clears, at Start, the failure state of the
// pipelines among ids that stopped (fail_reset.lua), in one pipelined
// round trip: this worker begins a new count.
func (c *RedisWorkerCoordinator) resetStoppedFailures(ctx context.Context, ids []string) {
	b := c.failBackend()
	if b == nil || len(ids) == 0 {
		return
	}
	calls := make([]leasebackend.Call, 0, len(ids))
	shared := make([]string, 0, len(ids))
	c.mu.Lock()
	for _, id := range ids {
		if _, ok := c.failRules[id]; ok {
			calls = append(calls, leasebackend.Call{Script: leasebackend.FailResetScript,
				Keys: []string{b.pipelineKeys(id)[2], c.keys.failure(id)}})
			shared = append(shared, id)
		}
	}
	c.mu.Unlock()
	if len(calls) == 0 {
		return
	}
	opCtx, cancel := c.opContext(ctx, opConnect)
	defer cancel()
	for i, cmd := range leasebackend.RunPipelined(opCtx, b.client, calls) {
		n, err := cmd.Int64()
		if err != nil {
			c.log.Warn("distributed: could not clear a stopped pipeline's failure count at start", "error", c.failure("reset failures", err))
			return
		}
		if n == 1 {
			c.log.Info("distributed: the pipeline had stopped after too many failed runs in the fleet; this worker begins a new count",
				"pipeline", shared[i])
		}
	}
}

// FailureState reads pipelineID's fleet-wide failure state for tools (the
// fleet CLI, the dashboard): count, backoff deadline by this worker's
// clock, last error; the zero state when the pipeline has no failure
// recorded. It needs only Connect.
func (c *RedisWorkerCoordinator) FailureState(ctx context.Context, pipelineID string) (runtime.FailureState, error) {
	all, err := c.FailureStates(ctx, []string{pipelineID})
	if err != nil {
		return runtime.FailureState{}, err
	}
	return all[0], nil
}

// FailureStates is FailureState for many pipelines in one pipelined round
// trip; the answer at index i is pipelineIDs[i]'s.
func (c *RedisWorkerCoordinator) FailureStates(ctx context.Context, pipelineIDs []string) ([]runtime.FailureState, error) {
	opCtx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	scores := make([]*redis.FloatSliceCmd, len(pipelineIDs))
	errs := make([]*redis.StringCmd, len(pipelineIDs))
	var now *redis.TimeCmd
	_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
		now = p.Time(opCtx)
		for i, id := range pipelineIDs {
			scores[i] = p.ZMScore(opCtx, c.keys.done(id), failsMember, failUntilMember)
			errs[i] = p.HGet(opCtx, c.keys.failure(id), "error")
		}
		return nil
	})
	// A key of another type under the prefix (data agora did not write)
	// answers WRONGTYPE for its pipeline alone: no failure state there.
	if err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "WRONGTYPE") {
		return nil, c.failure("read failure states", err)
	}
	sent := c.clock.Now()
	redisNow, _ := now.Result()
	out := make([]runtime.FailureState, len(pipelineIDs))
	for i := range pipelineIDs {
		v, err := scores[i].Result()
		if err != nil || len(v) != 2 || v[0] <= failBand {
			continue
		}
		st := runtime.FailureState{Count: int(v[0] - failBand), LastError: errs[i].Val()}
		until := int64(v[1] - failBand)
		switch {
		case until <= 0:
			st.Stopped = true
		case !redisNow.IsZero() && until > redisNow.UnixMilli():
			st.Until = sent.Add(time.Duration(until-redisNow.UnixMilli()) * time.Millisecond)
		}
		out[i] = st
	}
	return out, nil
}

// quorumFailures records fail (a failed run) or clears the failure state
// (a success after failures) on the Redlock primary, before the quorum
// lease is given back.
func (c *RedisWorkerCoordinator) quorumFailures(ctx context.Context, qb *quorumBackend, ref leaseRef, completed bool, fail *failReq, sent time.Time) {
	opCtx, cancel := c.opContext(ctx, opRelease)
	defer cancel()
	p := qb.primary.reserver
	switch {
	case !completed && fail != nil:
		_, rep, err := p.fail(opCtx, ref, fail)
		if err != nil {
			c.log.Warn("distributed: could not record a failed run on the primary", "pipeline", ref.PipelineID, "error", c.failure("record failure", err))
			return
		}
		c.noteFailure(ref.PipelineID, rep, fail.err, sent)
	case completed && ref.failures > 0:
		_, err := p.client.Pipelined(opCtx, func(pp redis.Pipeliner) error {
			p.queueFailClear(opCtx, pp, ref.PipelineID)
			return nil
		})
		if err != nil {
			c.log.Warn("distributed: could not clear a pipeline's failure count on the primary", "pipeline", ref.PipelineID, "error", c.failure("clear failures", err))
		}
	}
}
