package distributed

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"
)

// counters are the coordinator's event counts, shown in /status.
type counters struct {
	acquired, contended, slotCompleted, released, completed, lost,
	renewalFailures, fallbackLeases, errors, stateLost, epochMoves, reruns, refused, futureSlots atomic.Uint64
	// historySkipped counts run-history members read that were not run
	// records (foreign data under the prefix).
	historySkipped atomic.Uint64
	// auditSkipped counts audit-log members read that were not audit
	// entries (foreign data under the prefix).
	auditSkipped atomic.Uint64
}

// health tracks whether the last Redis operation worked.
type health struct {
	reachable atomic.Bool
	lastError atomic.Pointer[string]
	// refused is the reason Redis gave for refusing the last heartbeat,
	// acquire or renewal, nil while it takes them (see grantRefused).
	refused    atomic.Pointer[string]
	log        outageLog
	refusedLog outageLog
}

// failure records a failed Redis operation and returns its error, redacted
// and wrapped with what was being done. It logs when Redis goes from
// reachable to unreachable, not on every failure, and when that flaps at
// most once a minute (see outageLog). An error reply refusing the command
// (see refusedReply) is no outage: Redis answered. It is counted, its error
// wraps ErrRedisRefusing, and Redis stays reachable; grantRefused logs it.
func (c *RedisWorkerCoordinator) failure(what string, err error) error {
	if _, refused := refusedReply(err); refused {
		err = fmt.Errorf("distributed: %s: %w: %w", what, ErrRedisRefusing, c.s.redactor.Wrap(err))
		c.stats.errors.Add(1)
		c.stats.refused.Add(1)
		msg := err.Error()
		c.health.lastError.Store(&msg)
		c.noteOK()
		return err
	}
	err = fmt.Errorf("distributed: %s: %w", what, c.s.redactor.Wrap(err))
	c.stats.errors.Add(1)
	msg := err.Error()
	c.health.lastError.Store(&msg)
	if c.health.reachable.Swap(false) {
		logIt, unlogged := c.health.log.down(c.clock.Now())
		if !logIt {
			return err
		}
		args := []any{"error", err}
		if unlogged > 0 {
			args = append(args, "unlogged_outages", unlogged)
		}
		if errors.Is(err, ErrQuorumNotReached) {
			// The primary answered; too few quorum nodes did. The error names them.
			c.log.Warn("distributed: Redlock quorum unreachable", args...)
		} else {
			c.log.Warn("distributed: Redis unreachable", append([]any{"redis", c.s.primary.Redacted}, args...)...)
		}
	}
	return err
}

// noteOK records a successful Redis operation.
func (c *RedisWorkerCoordinator) noteOK() {
	if !c.health.reachable.Swap(true) && c.health.log.up() {
		c.log.Info("distributed: Redis reachable again", "redis", c.s.primary.Redacted)
	}
}

// Healthy reports whether leases can be granted: nil when Redis answers a
// PING, the error otherwise, so /readyz answers 503 while a fail-safe worker
// cannot run anything. While Redis refuses the worker's writes (an error
// wrapping ErrRedisRefusing; see grantRefused for the rule) Healthy retries
// the heartbeat instead of pinging, and reports the refusal until one is
// taken. With FallbackToLocal the worker can run on local leases, so it
// stays healthy; Status still shows Redis unreachable or refusing.
func (c *RedisWorkerCoordinator) Healthy(ctx context.Context) error {
	if c.isClosed() {
		return ErrClosed
	}
	if c.health.refused.Load() != nil {
		if err := c.heartbeat(ctx); err != nil && c.s.FallbackToLocal {
			return nil
		} else if err != nil {
			return err
		}
		if err := c.refusedErr(); err != nil && !c.s.FallbackToLocal {
			return err
		}
		return nil
	}
	ctx, cancel := c.opContext(ctx, opHealth)
	defer cancel()
	if err := c.backend.ping(ctx); err != nil {
		err = c.failure("health check", err)
		if c.s.FallbackToLocal {
			return nil
		}
		return err
	}
	c.noteOK()
	// Redis answers, but a pipeline whose keys hold foreign data runs
	// nowhere: /readyz says which and why.
	return c.problemsErr()
}

// CoordinatorStatus is what Status returns, shown in the pool's /status.
type CoordinatorStatus struct {
	// Mode is "redis" (single primary) or "redlock" (quorum).
	Mode string `json:"mode"`
	// Redis is the primary's URL, passwords redacted.
	Redis string `json:"redis"`
	// Topology is how the primary is deployed: "single" (one server),
	// "cluster" (Redis Cluster) or "sentinel" (a primary found through
	// Sentinels).
	Topology string `json:"topology"`
	// Nodes are the addresses the URL names, without credentials: the
	// server, the cluster's seed nodes or the Sentinels.
	Nodes []string `json:"nodes"`
	// MasterName is the name the Sentinels know the primary by (sentinel
	// topology only).
	MasterName string `json:"master_name,omitempty"`
	// WorkerID is the registered worker, empty before Start.
	WorkerID string `json:"worker_id,omitempty"`
	// Running is true between Start and Stop.
	Running bool `json:"running"`
	// Reachable is false when the last Redis operation failed to reach
	// Redis; a Redis that answered with an error reply is reachable.
	Reachable bool `json:"reachable"`
	// RefusedReason is the error reply with which Redis refused the last
	// heartbeat, acquire or renewal (OOM, READONLY, NOPERM, ...), redacted;
	// empty while it takes them. While it is set the worker is not ready.
	RefusedReason string `json:"refused_reason,omitempty"`
	// Refused counts Redis operations refused with such an error reply.
	Refused uint64 `json:"refused"`
	// LastError is the last Redis error, redacted.
	LastError string `json:"last_error,omitempty"`
	// FallbackToLocal says whether unfenced local leases are allowed.
	FallbackToLocal bool `json:"fallback_to_local"`
	// LeaseTTL is the lease lifetime in Redis.
	LeaseTTL string `json:"lease_ttl"`
	// Leases are the leases held now, by pipeline id.
	Leases []LeaseStatus `json:"leases"`
	// PipelineProblems names, by pipeline id, why a pipeline cannot be
	// granted a lease: its lease or token key holds data agora did not
	// write (ErrForeignData). Absent when there is none.
	PipelineProblems map[string]string `json:"pipeline_problems,omitempty"`
	// HistorySkipped counts run-history members read that were not run
	// records (written by something else under the prefix): skipped.
	HistorySkipped uint64 `json:"history_skipped"`
	// AuditSkipped counts audit-log members read that were not audit
	// entries (written by something else under the prefix): skipped.
	AuditSkipped uint64 `json:"audit_skipped"`
	// Acquired counts leases granted by Redis.
	Acquired uint64 `json:"acquired"`
	// Contended counts attempts refused because another worker held the lease.
	Contended uint64 `json:"contended"`
	// SlotCompleted counts attempts refused because the slot already ran.
	SlotCompleted uint64 `json:"slot_completed"`
	// StateLost counts slots refused because the coordination state was
	// lost after they began (see ErrStateLost).
	StateLost uint64 `json:"state_lost"`
	// EpochMoves counts the times this worker saw the state epoch move.
	EpochMoves uint64 `json:"epoch_moves"`
	// Reruns counts slots re-run because their holder died before
	// completing them (RerunInterrupted).
	Reruns uint64 `json:"reruns"`
	// Released counts leases given back after a failed run or at Stop.
	Released uint64 `json:"released"`
	// Completed counts leases given back after a successful run.
	Completed uint64 `json:"completed"`
	// Lost counts leases lost while held.
	Lost uint64 `json:"lost"`
	// RenewalFailures counts renewal rounds that failed in transport.
	RenewalFailures uint64 `json:"renewal_failures"`
	// FallbackLeases counts unfenced local leases granted because Redis was
	// unreachable.
	FallbackLeases uint64 `json:"fallback_leases"`
	// Errors counts failed Redis operations.
	Errors uint64 `json:"errors"`
	// Backend holds backend-specific state, such as quorum node reachability.
	Backend any `json:"backend,omitempty"`
}

// LeaseStatus describes one held lease in /status.
type LeaseStatus struct {
	PipelineID   string    `json:"pipeline_id"`
	RunNumber    int64     `json:"run_number"`
	FencingToken int64     `json:"fencing_token"`
	Fenced       bool      `json:"fenced"`
	AcquiredAt   time.Time `json:"acquired_at"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// Status returns a CoordinatorStatus snapshot.
func (c *RedisWorkerCoordinator) Status() any {
	st := CoordinatorStatus{
		Mode:             "redis",
		Redis:            c.s.primary.Redacted,
		Topology:         string(c.s.primary.Topology),
		Nodes:            append([]string{}, c.s.primary.Nodes...),
		Reachable:        c.health.reachable.Load(),
		FallbackToLocal:  c.s.FallbackToLocal,
		LeaseTTL:         c.s.LeaseTTL.String(),
		Acquired:         c.stats.acquired.Load(),
		Contended:        c.stats.contended.Load(),
		SlotCompleted:    c.stats.slotCompleted.Load(),
		StateLost:        c.stats.stateLost.Load(),
		EpochMoves:       c.stats.epochMoves.Load(),
		Reruns:           c.stats.reruns.Load(),
		Released:         c.stats.released.Load(),
		Completed:        c.stats.completed.Load(),
		Lost:             c.stats.lost.Load(),
		RenewalFailures:  c.stats.renewalFailures.Load(),
		FallbackLeases:   c.stats.fallbackLeases.Load(),
		Errors:           c.stats.errors.Load(),
		Refused:          c.stats.refused.Load(),
		Backend:          c.backend.status(),
		Leases:           []LeaseStatus{},
		PipelineProblems: c.pipelineProblems(),
		HistorySkipped:   c.stats.historySkipped.Load(),
		AuditSkipped:     c.stats.auditSkipped.Load(),
	}
	if len(c.s.quorum) > 0 {
		st.Mode = "redlock"
	}
	if f := c.s.primary.Failover; f != nil {
		st.MasterName = f.MasterName
	}
	if msg := c.health.lastError.Load(); msg != nil {
		st.LastError = *msg
	}
	if r := c.health.refused.Load(); r != nil {
		st.RefusedReason = *r
	}
	c.mu.Lock()
	st.WorkerID = c.workerID
	st.Running = c.running
	for _, h := range c.leases {
		st.Leases = append(st.Leases, LeaseStatus{
			PipelineID:   h.lease.PipelineID,
			RunNumber:    h.lease.RunNumber,
			FencingToken: h.lease.FencingToken,
			Fenced:       h.lease.Fenced(),
			AcquiredAt:   h.lease.AcquiredAt,
			ExpiresAt:    h.lease.ExpiresAt,
		})
	}
	c.mu.Unlock()
	sort.Slice(st.Leases, func(i, j int) bool { return st.Leases[i].PipelineID < st.Leases[j].PipelineID })
	return st
}
