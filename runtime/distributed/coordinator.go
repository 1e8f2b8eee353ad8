// Package distributed shares leases across a fleet of agora workers through
// Redis, so that each scheduled run happens on exactly one replica and every
// run carries a fencing token a downstream store can check.
//
// A worker binary builds the coordinator from the environment:
//
//	coordinator, err := distributed.CoordinatorFromEnv(distributed.ModeAuto)
//	if err != nil {
//		return nil, err // names the AGORA_DISTRIBUTED_* variable
//	}
//	pool := runtime.NewWorkerPool(coordinator) // nil without a Redis URL: ignored
//
// The rules it enforces — slots, run numbers, fencing tokens, renewal,
// fail-safe behaviour — and the assumptions they rest on are described in
// docs/distributed.md.
package distributed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redisurl"
	"github.com/agora-etl/agora/runtime"
)

var (
	_ runtime.Coordinator    = (*RedisWorkerCoordinator)(nil)
	_ runtime.HealthReporter = (*RedisWorkerCoordinator)(nil)
	_ runtime.StatusReporter = (*RedisWorkerCoordinator)(nil)
)

// RedisWorkerCoordinator is a runtime.Coordinator backed by Redis. It is safe
// for concurrent use.
type RedisWorkerCoordinator struct {
	s       settings
	client  redis.UniversalClient
	backend leaseBackend
	// finisher batches releases and completions on a single Redis (nil
	// otherwise).
	finisher *finishBatcher
	keys     keys
	log      *slog.Logger
	skew     clockSkew // this clock's offset from the server's (clockskew.go)
	clock    runtime.Clock

	lostCB atomic.Pointer[func(string, runtime.Lease)]
	// bfHeld are the backfill slots this worker runs, by fencing token
	// (backfill_lease.go); guarded by bfMu.
	bfMu   sync.Mutex
	bfHeld map[int64]*heldBackfill

	mu       sync.Mutex
	closed   bool
	running  bool // between Start and Stop
	workerID string
	owner    string // workerID plus a random suffix: unique per instance
	// recordKey is the worker record's key, fixed at Start, and boxed.
	recordKey    string
	recordKeyArg any
	// recordOK is when the last record write that went through was sent.
	recordOK time.Time
	// record holds the worker record's fields fixed at Start, so a
	// heartbeat does not recompute them.
	record workerRecord
	leases map[string]*heldLease
	busy   map[string]bool // pipelines with an acquire or release in flight
	// histCount counts each pipeline's runs recorded by this worker, to
	// trim its history every so many (history.go).
	histCount map[string]uint32
	// inFlight counts those acquires and releases: Stop waits for them, so
	// Close cannot shut the client under one and strand its lease until
	// the TTL.
	inFlight sync.WaitGroup
	local    localState
	loopStop chan struct{}
	loops    sync.WaitGroup

	stats  counters
	health health
	// foreignWarned holds the keys warnForeign has logged.
	foreignWarned sync.Map
	// problems holds the pipelines whose keys hold foreign data.
	problems dataProblems
	// epoch is the last state epoch a heartbeat or connection reported
	// (µs; 0 before the first); lostLog limits the logs of slots refused
	// for state loss (epoch.go).
	epoch   atomic.Int64
	lostLog stateLostLog
	// rerun holds the pipelines that re-run a slot whose holder died, set
	// before Start (SetRerunInterrupted).
	rerun map[string]bool
	// failRules holds each pipeline's failure rules, set before Start
	// (ShareFailures); failSeen the failure state this worker last
	// learned per pipeline (failures.go).
	failRules map[string]runtime.FailureRules
	failSeen  map[string]runtime.FailureState
	// noAhead turns lease-ahead off (LeaseAhead 0): benchmarks measure
	// the path without it beside the one with it.
	noAhead bool
	metrics *coordMetrics
	ctl     control
	// pref maps each pipeline another live worker is preferred for to
	// that worker's id, worked out from the registry view at each refresh
	// (preference.go); nil until read, and always on a Cluster.
	pref     atomic.Pointer[map[string]string]
	prefMu   sync.Mutex          // serialises refreshes
	prefSeen map[string][]string // instance -> its pipelines, as read
}

// heldLease is a lease this worker holds, with what renewal needs.
type heldLease struct {
	lease    runtime.Lease
	mode     int64     // the run number asked for: slot, RunNumberAuto or RunNumberOnce
	failures int       // the fleet's consecutive failures when granted (failures.go)
	lastSent time.Time // when the last successful acquire or renewal was sent
	deadline time.Time // give the lease up locally if not renewed by then
	// recordUntil bounds deadline when takeover is on: recordGiveUp after
	// the send of the last record refresh a renewal confirmed (zero: off).
	recordUntil time.Time
	fallback    bool   // an unfenced local lease (FallbackToLocal)
	stored      string // the lease's value in Redis; set before the lease is shared
}

func (h *heldLease) ref(owner string) leaseRef {
	return leaseRef{
		PipelineID: h.lease.PipelineID, Owner: owner, Token: h.lease.FencingToken,
		RunNumber: h.lease.RunNumber, Mode: h.mode, stored: h.stored, failures: h.failures,
	}
}

// setDeadline sets h's deadline from a grant or renewal sent at sent and
// valid for validFor, and from the record rule when recordSent is set.
func (h *heldLease) setDeadline(s settings, sent time.Time, validFor time.Duration, recordSent time.Time) {
	h.deadline = sent.Add(min(s.LeaseRenewalDeadline, validFor))
	if !recordSent.IsZero() {
		h.recordUntil = recordSent.Add(s.recordGiveUp)
	}
	if !h.recordUntil.IsZero() && h.recordUntil.Before(h.deadline) {
		h.deadline = h.recordUntil
	}
}

// NewRedisWorkerCoordinator validates opts and returns a coordinator. It does
// not connect yet: Start (or Connect, for read-only inspection) does.
func NewRedisWorkerCoordinator(opts Options) (*RedisWorkerCoordinator, error) {
	s, err := resolve(opts, optionNames)
	if err != nil {
		return nil, err
	}
	routeRedisClientLogs()
	clientLogSecrets.add(s.redactor)
	watch := &stateWatch{keys: keys{prefix: s.KeyPrefix}}
	if s.primary.Topology == redisurl.Cluster {
		watch = nil // each pipeline keeps its own epoch
	}
	client := newPrimaryClient(s.primary, watch)
	backend, err := newLeaseBackend(client, s)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	c := &RedisWorkerCoordinator{
		s:       s,
		client:  client,
		backend: backend,
		keys:    keys{prefix: s.KeyPrefix},
		log:     s.Logger,
		clock:   s.Clock,
		leases:  map[string]*heldLease{},
		busy:    map[string]bool{},
		local:   newLocalState(),
		metrics: newCoordMetrics(),
	}
	if b, ok := backend.(*singleBackend); ok {
		c.finisher = &finishBatcher{send: b.finishMany, one: b.finishOne, timeout: s.opTimeout}
	}
	if watch != nil {
		watch.log = c.log.Warn
		watch.notify = func(epoch int64, moved bool, runID string) {
			if moved {
				c.noteEpoch(epoch, "the Redis server's run_id changed to "+runID+" (restart from a file, or failover)")
			} else {
				c.noteEpoch(epoch, "the epoch changed")
			}
		}
	}
	c.instrument()
	c.health.reachable.Store(true)
	return c, nil
}

// Connect checks that the primary Redis answers and loads the Lua scripts. A
// coordinator that is only connected can list workers and validate tokens
// without registering a worker.
func (c *RedisWorkerCoordinator) Connect(ctx context.Context) error {
	if c.isClosed() {
		return ErrClosed
	}
	ctx, cancel := c.opContext(ctx, opConnect)
	defer cancel()
	if err := c.client.Ping(ctx).Err(); err != nil {
		return c.failure(fmt.Sprintf("connect to %s", c.s.primary.Redacted), err)
	}
	if err := c.backend.prepare(ctx); err != nil {
		return c.failure(fmt.Sprintf("prepare %s", c.s.primary.Redacted), err)
	}
	c.noteOK()
	return nil
}

// Close stops the coordinator if it runs (releasing its leases) and closes
// its connections. Every later call returns ErrClosed.
func (c *RedisWorkerCoordinator) Close() error {
	stopErr := c.Stop(context.Background())
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return stopErr
	}
	c.closed = true
	c.mu.Unlock()
	err := errors.Join(stopErr, c.backend.close(), c.client.Close())
	clientLogSecrets.remove(c.s.redactor) // its clients log nothing more
	return err
}

// Start registers the worker with its pipelines and starts the heartbeat and
// lease renewal. Redis being unreachable is not an error here: the worker
// keeps trying in the background, refuses leases meanwhile (or grants local
// ones with FallbackToLocal) and reports unhealthy, so a brief Redis outage
// during a deploy does not crash-loop the fleet.
func (c *RedisWorkerCoordinator) Start(ctx context.Context, workerID string, pipelineIDs []string) error {
	if workerID == "" {
		return errors.New("distributed: Start: empty worker id")
	}
	for _, id := range pipelineIDs {
		if id == "" {
			return errors.New("distributed: Start: empty pipeline id")
		}
	}
	if v, ok := c.backend.(startVerifier); ok {
		// A misconfigured quorum (two URLs for one server, a replica) is
		// refused outright, unlike an unreachable Redis.
		if err := v.verifyStart(ctx); err != nil {
			return fmt.Errorf("distributed: Start: %w", err)
		}
	}
	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		return fmt.Errorf("distributed: Start: %w", err)
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return ErrClosed
	case c.running:
		c.mu.Unlock()
		return ErrAlreadyStarted
	}
	c.running = true
	c.workerID = workerID
	c.owner = workerID + "#" + hex.EncodeToString(suffix)
	c.recordKey = c.keys.worker(workerID)
	c.recordKeyArg = c.recordKey
	c.recordOK = time.Time{}
	c.record = newWorkerRecord(workerID, pipelineIDs, c.clock.Now())
	c.record.schedules = c.ctl.schedulesJSON()
	c.record.after = c.ctl.afterJSON()
	c.loopStop = make(chan struct{})
	stop := c.loopStop
	c.mu.Unlock()

	if err := c.Connect(ctx); err != nil {
		if refused := refusal(err); refused != nil {
			// Bad credentials or database: no retry can fix that.
			c.mu.Lock()
			c.running = false
			c.mu.Unlock()
			return fmt.Errorf("distributed: Start: %w", refused)
		}
		if errors.Is(err, ErrRedisRefusing) {
			// It answers, but refuses (OOM, READONLY): not ready until a
			// heartbeat is taken (see grantRefused).
			c.grantRefused("connection set-up", err)
		} else if c.s.FallbackToLocal {
			c.log.Warn("distributed: Redis unreachable at start; runs will use unfenced local leases until it answers (FallbackToLocal)",
				"redis", c.s.primary.Redacted, "error", err)
		} else {
			c.log.Error("distributed: Redis unreachable at start; no lease is granted until it answers",
				"redis", c.s.primary.Redacted, "error", err)
		}
	} else if err := c.heartbeat(ctx); err != nil {
		c.log.Warn("distributed: registering the worker failed; retrying at the next heartbeat", "error", err)
	} else if err := c.initPipelineEpochs(ctx, pipelineIDs); err != nil {
		c.log.Warn("distributed: making the pipelines' state epochs failed; a pipeline's first slot may be skipped", "error", c.failure("init epochs", err))
	} else {
		c.resetStoppedFailures(ctx, pipelineIDs)
	}

	c.startControl(ctx, pipelineIDs)
	c.loops.Add(3)
	go c.renewLoop(stop)
	go c.heartbeatLoop(stop)
	go c.controlLoop(stop)
	if c.usesPreference() {
		c.prefMu.Lock()
		c.prefSeen = map[string][]string{}
		c.prefMu.Unlock()
		c.refreshPreference(ctx)
		c.loops.Add(1)
		go c.preferenceLoop(stop)
	}
	c.log.Info("distributed: worker started",
		"worker", workerID, "redis", c.s.primary.Redacted, "pipelines", pipelineIDs,
		"lease_ttl", c.s.LeaseTTL, "renew_every", c.s.renewEvery, "renewal_deadline", c.s.LeaseRenewalDeadline)
	return nil
}

// Stop ends the background work, releases every held lease at once (so
// another replica can take over without waiting out the TTL) and deletes the
// worker record. It ignores ctx's cancellation (a shutdown's cancelled
// context must not leave leases behind); every Redis call is bounded by its
// own timeout instead. Stop leaves the connection open; Close closes it.
func (c *RedisWorkerCoordinator) Stop(ctx context.Context) error {
	c.mu.Lock()
	if !c.running {
		c.mu.Unlock()
		return nil
	}
	c.running = false
	close(c.loopStop)
	held := c.leases
	c.leases = map[string]*heldLease{}
	owner, workerID := c.owner, c.workerID
	c.mu.Unlock()
	c.loops.Wait()

	ctx = withOp(context.WithoutCancel(ctx), opRelease)
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs []error
	)
	for _, h := range held {
		if h.fallback {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.giveBack(ctx, h, owner, false); err != nil && !errors.Is(err, ErrLeaseNotHeld) {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	// An acquire in flight gives its lease back itself once it sees the
	// worker stopped; a release in flight finishes. Both are bounded by
	// their request timeouts.
	c.inFlight.Wait()
	dctx, cancel := c.opContext(ctx, opStop)
	if err := c.client.Del(dctx, c.keys.worker(workerID)).Err(); err != nil {
		errs = append(errs, c.failure("unregister worker", err))
	}
	c.leavePreference(dctx)
	cancel()
	c.log.Info("distributed: worker stopped", "worker", workerID, "released", len(held))
	return errors.Join(errs...)
}

// SetLeaseLostCallback sets the function called, once per lease, when a held
// lease is lost: Redis says it expired or changed hands, or renewal kept
// failing until LeaseRenewalDeadline. The lease is already removed locally
// when cb runs. cb runs on the renewal goroutine and should return quickly
// (the pool cancels the run's context); it must not call Stop or Close,
// which wait for that goroutine to end.
func (c *RedisWorkerCoordinator) SetLeaseLostCallback(cb func(pipelineID string, lease runtime.Lease)) {
	if cb == nil {
		c.lostCB.Store(nil)
		return
	}
	c.lostCB.Store(&cb)
}

// CurrentLease returns the lease this worker holds for pipelineID.
func (c *RedisWorkerCoordinator) CurrentLease(pipelineID string) (runtime.Lease, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Past its deadline a lease is no longer this worker's, even before the
	// renewal loop has removed it: another worker may already hold it.
	if h := c.leases[pipelineID]; h != nil && (h.fallback || c.clock.Now().Before(h.deadline)) {
		return h.lease, true
	}
	return runtime.Lease{}, false
}

// notifyLost calls the lost-lease callback for each lease, outside any lock.
func (c *RedisWorkerCoordinator) notifyLost(lost []*heldLease, reason string) {
	for _, h := range lost {
		c.stats.lost.Add(1)
		c.log.Warn("distributed: lease lost; cancelling the run",
			"pipeline", h.lease.PipelineID, "run", h.lease.RunNumber, "token", h.lease.FencingToken, "reason", reason)
		if cb := c.lostCB.Load(); cb != nil {
			(*cb)(h.lease.PipelineID, h.lease)
		}
	}
}

func (c *RedisWorkerCoordinator) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// takesOver reports whether leases of dead workers are taken over from the
// registry (see takeover.go).
func (c *RedisWorkerCoordinator) takesOver() bool {
	b, ok := c.backend.(*singleBackend)
	return ok && b.registry != ""
}

// noteRecord records that a write of the worker record sent at sent went
// through.
func (c *RedisWorkerCoordinator) noteRecord(sent time.Time) {
	c.mu.Lock()
	if sent.After(c.recordOK) {
		c.recordOK = sent
	}
	c.mu.Unlock()
}

// opContext bounds one Redis operation by opTimeout (or ctx's earlier
// deadline) and tags it with op for the request metrics.
func (c *RedisWorkerCoordinator) opContext(ctx context.Context, op redisOp) (context.Context, context.CancelFunc) {
	return context.WithTimeout(withOp(ctx, op), c.s.opTimeout)
}
