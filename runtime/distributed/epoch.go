package distributed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// The state epoch: what a grant may not contradict when Redis loses data
//
// A lease, a slot's completion mark and a worker's record are keys in
// Redis. When Redis loses them (a restart without persistence, a restart
// from an AOF or RDB file missing the last writes, a failover to a replica
// that missed them, FLUSHALL), the state no longer says what was granted:
// a slot granted or completed just before the loss looks free, and a live
// holder whose record was lost looks dead. The epoch is the Redis time (µs)
// from which the state is known to be whole, and the acquire script keeps
// three rules against it (internal/leasebackend/lua/acquire.lua):
//
//   - a cron or Every slot scheduled before the epoch is refused as possibly
//     done (ErrStateLost, counted and logged once per pipeline and epoch):
//     whoever asked for it before the loss asked at or after its start;
//   - a lease granted before the epoch (its token, Redis time, is smaller)
//     is never taken over: its holder's record may have gone with the lost
//     writes while the holder runs; it is free only when it expires;
//   - a grant requires the requester's own record, written under the
//     current epoch: after a loss each worker writes its record again
//     first, and a contender never finds the record of a holder granted in
//     this epoch missing while that holder runs (see takeover.go).
//
// How the epoch moves:
//
//   - Lost keys: the epoch key (<prefix>epoch) is gone with them. Each
//     worker whose record is missing writes it again at once, before its
//     next grant, and the heartbeat script makes the epoch again: the Redis
//     time then when the worker saw an epoch before (it ran while the state
//     was lost, so what it held may have been granted), and 1 when it saw
//     none (the state is new: nothing was granted from it, and every slot
//     may run). A worker that saw an epoch and finds an older one (a worker
//     new to the fleet made it after the loss) moves it to the Redis time.
//     Whenever the epoch moves, every worker record loses its epoch, so
//     each worker writes its record again (and learns the new epoch)
//     before its next grant.
//   - State that went back in time but kept the keys (a file or a promoted
//     replica): every connection, when it opens, compares the server's
//     run_id (new at every start of a Redis process) with the one stored in
//     <prefix>server. A different one moves the epoch to the Redis time
//     (internal/leasebackend/lua/epoch_bump.lua), before the connection
//     carries any other command. Every connection to a restarted or
//     promoted server is a new one.
//   - On a Redis Cluster a script reaches only the keys of one hash slot,
//     so each pipeline keeps its own epoch (<prefix>epoch:{id}), made 1 at
//     Start when missing, and the Redis time by the acquire script when it
//     finds it missing later (its master lost its data). A replica
//     promoted after missing writes keeps its pipelines' epochs (see
//     docs/distributed.md for what that costs).
//
// If every worker and Redis's data are lost together, nobody alive knows
// what ran: the new state starts at epoch 1, and the fenced sinks' slot
// ledger (package etl/fencing) is what keeps a completed slot from being
// written twice.
//
// The price: around a loss, the slot in progress per pipeline is skipped,
// and so is each slot that begins before the new epoch plus the lead (the
// epoch is when the first worker is back, so a schedule whose slots come
// faster than the fleet reconnects loses one more); a lease granted before
// it is kept by its holder until its TTL. The slot rule compares the slot with the Redis clock, and no slot
// is granted before it is within lead of that clock (clockskew.go), so a
// replica whose clock runs ahead cannot get around it. A counted run
// (runtime.RunCounted) is no slot: no epoch rule applies to it.

// ErrStateLost is wrapped by the error of a slot refused because it is
// older than the coordination state: Redis lost data since (see the state
// epoch above), and the slot may have run before. It wraps
// runtime.ErrSlotCompleted, so a pool skips the slot as done.
var ErrStateLost = fmt.Errorf("distributed: the coordination state was lost after this slot began, so it may have run: %w", runtime.ErrSlotCompleted)

// stateLostLog logs a refusal for state loss once per pipeline and epoch
// change, not once per slot.
type stateLostLog struct {
	mu     sync.Mutex
	logged map[string]bool
}

// noteStateLost logs, once per pipeline until the epoch moves again, that
// its slot was skipped because the coordination state was lost.
func (c *RedisWorkerCoordinator) noteStateLost(pipelineID string, slot int64) {
	c.lostLog.mu.Lock()
	if c.lostLog.logged == nil {
		c.lostLog.logged = map[string]bool{}
	}
	seen := c.lostLog.logged[pipelineID]
	c.lostLog.logged[pipelineID] = true
	c.lostLog.mu.Unlock()
	if seen {
		return
	}
	c.log.Warn("distributed: slot skipped: the coordination state was lost (Redis restarted empty, restarted from a file or failed over) after it began, so it may have run; later slots run as usual",
		"pipeline", pipelineID, "slot", time.Unix(slot, 0).UTC().Format(time.RFC3339), "run", slot)
}

// noteEpoch records the epoch a heartbeat or a connection reported, and
// logs when it moved: every worker sees that once.
func (c *RedisWorkerCoordinator) noteEpoch(epoch int64, why string) {
	if epoch <= 0 {
		return
	}
	old := c.epoch.Swap(epoch)
	if old == 0 || old == epoch {
		return
	}
	c.stats.epochMoves.Add(1)
	c.lostLog.mu.Lock()
	c.lostLog.logged = nil
	c.lostLog.mu.Unlock()
	c.log.Warn("distributed: the coordination state was lost or went back in time; slots scheduled before the new epoch are skipped as possibly done, and leases granted before it are not taken over",
		"why", why, "epoch", time.UnixMicro(epoch).UTC().Format(time.RFC3339Nano))
}

// stateWatch checks, on every new connection to a single server (direct or
// found through Sentinel), whether the state belongs to that server, and
// moves the epoch when it may not (see internal/leasebackend/lua/epoch_bump.lua).
type stateWatch struct {
	keys   keys
	log    func(msg string, args ...any) // WARN, set before connecting
	warned sync.Once
	notify func(epoch int64, moved bool, runID string) // set before connecting
	next   func(ctx context.Context, cn *redis.Conn) error
}

// onConnect is the go-redis OnConnect hook: it runs before the connection
// carries any other command.
func (w *stateWatch) onConnect(ctx context.Context, cn *redis.Conn) error {
	if err := w.check(ctx, cn); err != nil {
		// go-redis hands on the error of a connection's set-up unwrapped
		// once: this layer is what it peels off.
		return &connectError{err}
	}
	return nil
}

// connectError carries a connection set-up error through go-redis.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// check is onConnect's work.
func (w *stateWatch) check(ctx context.Context, cn *redis.Conn) error {
	if w.next != nil {
		if err := w.next(ctx, cn); err != nil {
			return err
		}
	}
	info, err := cn.Info(ctx, "server").Result()
	if err != nil {
		var reply redis.Error
		if errors.As(err, &reply) {
			// A server without INFO server (an in-process test server, a
			// proxy that filters commands) cannot tell its restarts apart:
			// only the lost-keys rule holds there.
			w.unsupported(err)
			return nil
		}
		return fmt.Errorf("distributed: reading the server's run_id: %w", err)
	}
	if infoField(info, "redis_mode") == "sentinel" {
		// The failover client opens its connections to the Sentinels with
		// the same hook; they hold no state.
		return nil
	}
	if err := w.checkEviction(ctx, cn); err != nil {
		return err
	}
	runID := infoField(info, "run_id")
	if runID == "" {
		return errors.New("distributed: the server reports no run_id (INFO server), so a restart that lost data could not be told apart")
	}
	// EVAL, not EVALSHA: the connection is new, and the script may not
	// be loaded yet.
	res, err := leasebackend.EpochBumpScript.Eval(ctx, cn, []string{w.keys.server(), w.keys.epoch()}, runID, w.keys.workerPattern()).Int64Slice()
	if err != nil {
		return fmt.Errorf("distributed: checking the coordination state epoch: %w", err)
	}
	if len(res) == 2 && w.notify != nil {
		w.notify(res[1], res[0] == 1, runID)
	}
	return nil
}

// ErrEvictingRedis is wrapped by the error of every connection to a Redis
// that may evict keys (maxmemory set with a policy other than noeviction):
// an evicted lease or completion mark would let a slot run twice, so the
// coordinator does not use such a server (fail-safe).
var ErrEvictingRedis = errors.New("distributed: the Redis server may evict keys; set maxmemory-policy noeviction")

// checkEviction refuses a server that may evict keys.
func (w *stateWatch) checkEviction(ctx context.Context, cn *redis.Conn) error {
	info, err := cn.Info(ctx, "memory").Result()
	if err != nil {
		return fmt.Errorf("distributed: reading the server's maxmemory-policy: %w", err)
	}
	policy := infoField(info, "maxmemory_policy")
	if max := infoField(info, "maxmemory"); max == "" || max == "0" || policy == "noeviction" || policy == "" {
		return nil
	}
	return fmt.Errorf("%w (it has maxmemory %s and maxmemory-policy %s: an evicted lease or completed-slot mark could let a slot run twice)",
		ErrEvictingRedis, infoField(info, "maxmemory_human"), policy)
}

// unsupported says, once, that the server cannot report its run_id.
func (w *stateWatch) unsupported(err error) {
	w.warned.Do(func() {
		if w.log != nil {
			w.log("distributed: the Redis server does not answer INFO server, so a restart from a file or a failover that lost writes cannot be detected; a restart that lost every key still is",
				"error", err)
		}
	})
}

// infoField returns the value of name in an INFO reply.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// initPipelineEpochs makes the Cluster epoch of each pipeline that has none
// (internal/leasebackend/lua/epoch_init.lua), in one pipelined round trip,
// so that a new pipeline's first slots are not taken for slots of lost
// state.
func (c *RedisWorkerCoordinator) initPipelineEpochs(ctx context.Context, pipelineIDs []string) error {
	if _, cluster := c.client.(*redis.ClusterClient); !cluster || len(pipelineIDs) == 0 {
		return nil
	}
	ctx, cancel := c.opContext(ctx, opConnect)
	defer cancel()
	calls := make([]leasebackend.Call, len(pipelineIDs))
	for i, id := range pipelineIDs {
		calls[i] = leasebackend.Call{Script: leasebackend.EpochInitScript, Keys: []string{c.keys.pipelineEpoch(id)}}
	}
	for _, cmd := range leasebackend.RunPipelined(ctx, c.client, calls) {
		if err := cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}
