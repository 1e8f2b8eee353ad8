package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// ErrLeaseNotHeld is wrapped by a coordinator's error for a lease this
// worker does not hold: LocalCoordinator.RenewLease's when no lease is held
// for the pipeline, and the Redis coordinator's RenewLease, ReleaseLease and
// CompleteLease (distributed.ErrLeaseNotHeld is this value) when the lease
// was never acquired, was given back, expired or was taken over.
var ErrLeaseNotHeld = errors.New("runtime: lease not held")

// LocalCoordinator is the in-process Coordinator a WorkerPool uses when none
// is configured. It applies the same slot rules as the distributed
// coordinator, in memory and for this process only: a slot (SlotRun) at or
// below the pipeline's last completed slot is refused with
// ErrSlotCompleted, a counted run is granted whenever the lease is free, a completed RunNumberOnce is refused for the rest of the
// process's life, and RunNumberAuto is numbered 1, 2, 3… per pipeline. Its
// leases are unfenced (FencingToken 0) and never expire, so they are never
// lost. It is safe for concurrent use and cheap enough for tens of thousands
// of pipelines.
type LocalCoordinator struct {
	clock Clock

	workerID atomic.Pointer[string]

	mu      sync.RWMutex
	entries map[string]*localEntry

	// runs keeps the run history; nil: none is kept.
	runs HistoryStore

	// deadlines holds, per pipeline, the last slot MissedDeadline reported
	// (Unix s); guarded by mu, made at the first report, so pipelines
	// without a deadline cost nothing here.
	deadlines map[string]int64
}

// localEntry is one pipeline's lease state, kept small: a pool may hold
// tens of thousands (TestLocalEntrySize).
type localEntry struct {
	mu       sync.Mutex
	held     bool
	onceDone bool
	// auto marks a held lease numbered by the coordinator: its number is not
	// a slot and must not block later slots.
	auto bool
	// slot marks a held lease for a slot (RunSlot): only a slot's
	// completion blocks the slots up to it.
	slot          bool
	runNumber     int64
	acquiredAt    int64 // Unix ns
	lastCompleted int64
	autoNumber    int64
}

// NewLocalCoordinator returns a LocalCoordinator reading time from clock
// (nil means SystemClock).
func NewLocalCoordinator(clock Clock, opts ...LocalOption) *LocalCoordinator {
	if clock == nil {
		clock = SystemClock{}
	}
	c := &LocalCoordinator{clock: clock, entries: make(map[string]*localEntry)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Start records the worker id. State for a pipeline is made on its first
// lease, so pipelines that have not run yet cost nothing here.
func (c *LocalCoordinator) Start(_ context.Context, workerID string, _ []string) error {
	c.workerID.Store(&workerID)
	return nil
}

// Stop releases every held lease.
func (c *LocalCoordinator) Stop(context.Context) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, e := range c.entries {
		e.mu.Lock()
		e.held = false
		e.mu.Unlock()
	}
	return nil
}

func (c *LocalCoordinator) entry(id string) *localEntry {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	if ok {
		return e
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok = c.entries[id]; !ok {
		e = &localEntry{}
		c.entries[id] = e
	}
	return e
}

// TryAcquireLease grants the lease unless it is already held or the slot is
// completed.
func (c *LocalCoordinator) TryAcquireLease(_ context.Context, pipelineID string, runNumber int64) (bool, error) {
	_, ok, err := c.acquireEntry(c.entry(pipelineID), pipelineID, runNumber, c.clock.Now())
	return ok, err
}

// acquireEntry applies the slot rules to e, the entry of pipelineID. The
// pool keeps e from its first run on, so a run costs no map lookup.
func (c *LocalCoordinator) acquireEntry(e *localEntry, pipelineID string, runNumber int64, now time.Time) (Lease, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.held {
		return Lease{}, false, nil
	}
	auto, slot := false, false
	switch RunKindOf(runNumber) {
	case RunOnce:
		if e.onceDone {
			return Lease{}, false, ErrSlotCompleted
		}
	case RunContinuous:
		e.autoNumber++
		runNumber, auto = e.autoNumber, true
	case RunSlot:
		runNumber, slot = RunValue(runNumber), true
		if runNumber <= e.lastCompleted {
			return Lease{}, false, ErrSlotCompleted
		}
	case RunCounted:
		// The caller's own count: one holder at a time, and no slot rule.
	default:
		return Lease{}, false, fmt.Errorf("runtime: pipeline %q: invalid run number %d", pipelineID, runNumber)
	}
	e.held, e.auto, e.slot = true, auto, slot
	e.runNumber, e.acquiredAt = runNumber, now.UnixNano()
	return c.leaseOf(pipelineID, e, now), true, nil
}

// leaseOf builds the Lease e holds; e.mu must be held.
func (c *LocalCoordinator) leaseOf(pipelineID string, e *localEntry, at time.Time) Lease {
	var worker string
	if w := c.workerID.Load(); w != nil {
		worker = *w
	}
	return Lease{PipelineID: pipelineID, WorkerID: worker, RunNumber: e.runNumber, Slot: e.slot, AcquiredAt: at}
}

// ReleaseLease gives up the lease without marking its slot completed.
func (c *LocalCoordinator) ReleaseLease(_ context.Context, pipelineID string) error {
	c.release(pipelineID, false)
	return nil
}

// CompleteLease gives up the lease and records its slot as completed.
func (c *LocalCoordinator) CompleteLease(_ context.Context, pipelineID string) error {
	c.release(pipelineID, true)
	return nil
}

func (c *LocalCoordinator) release(pipelineID string, completed bool) {
	c.releaseEntry(c.entry(pipelineID), completed)
}

func (c *LocalCoordinator) releaseEntry(e *localEntry, completed bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.held {
		return
	}
	e.held = false
	if !completed {
		return
	}
	switch n := e.runNumber; {
	case n == RunNumberOnce:
		e.onceDone = true
	case e.slot && n > e.lastCompleted:
		e.lastCompleted = n
	}
}

// RenewLease succeeds while the lease is held; local leases do not expire.
func (c *LocalCoordinator) RenewLease(_ context.Context, pipelineID string) error {
	e := c.entry(pipelineID)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.held {
		return fmt.Errorf("%w: pipeline %q", ErrLeaseNotHeld, pipelineID)
	}
	return nil
}

// ValidateLease reports whether a lease with token is held for pipelineID.
// Local leases carry token 0.
func (c *LocalCoordinator) ValidateLease(_ context.Context, pipelineID string, token int64) (bool, error) {
	e := c.entry(pipelineID)
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.held && token == 0, nil
}

// CurrentLease returns the lease held for pipelineID.
func (c *LocalCoordinator) CurrentLease(pipelineID string) (Lease, bool) {
	e := c.entry(pipelineID)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.held {
		return Lease{}, false
	}
	return c.leaseOf(pipelineID, e, time.Unix(0, e.acquiredAt).In(c.clock.Now().Location())), true
}

// SetLeaseLostCallback accepts cb and never calls it: local leases cannot be
// lost.
func (c *LocalCoordinator) SetLeaseLostCallback(func(pipelineID string, lease Lease)) {}

// Healthy always succeeds: there is nothing to be disconnected from.
func (c *LocalCoordinator) Healthy(context.Context) error { return nil }

// LocalCoordinatorStatus is what LocalCoordinator.Status reports in /status.
type LocalCoordinatorStatus struct {
	// Kind is always "local".
	Kind string `json:"kind"`
	// HeldLeases counts the leases held right now.
	HeldLeases int `json:"held_leases"`
}

// Status reports the coordinator kind and how many leases are held.
func (c *LocalCoordinator) Status() any {
	c.mu.RLock()
	defer c.mu.RUnlock()
	st := LocalCoordinatorStatus{Kind: "local"}
	for _, e := range c.entries {
		e.mu.Lock()
		if e.held {
			st.HeldLeases++
		}
		e.mu.Unlock()
	}
	return st
}

// LocalLeases returns pipelineID's leases, which the pool keeps so that a
// run costs no map lookup.
func (c *LocalCoordinator) LocalLeases(pipelineID string) LocalLeases {
	return &localLeases{c: c, e: c.entry(pipelineID), id: pipelineID}
}

// localLeases is one pipeline's LocalLeases: its entry, found once.
type localLeases struct {
	c  *LocalCoordinator
	e  *localEntry
	id string
}

// Acquire applies the slot rules to the pipeline's entry.
func (l *localLeases) Acquire(runNumber int64, now time.Time) (Lease, bool, error) {
	return l.c.acquireEntry(l.e, l.id, runNumber, now)
}

// Release gives the lease back, marking its slot completed when completed.
func (l *localLeases) Release(completed bool) { l.c.releaseEntry(l.e, completed) }

// Record keeps rec in the coordinator's run history.
func (l *localLeases) Record(rec history.Record) { l.c.runs.Add(rec) }

// Capabilities: the local coordinator's leases are in memory (LocalLeaser),
// and it reports health, status and missed deadlines; given a run history
// (WithLocalRunHistory), it records runs and reads them back. It decides
// leases one at a time (each takes well under a microsecond) and carries
// no fleet commands.
func (c *LocalCoordinator) Capabilities() Capabilities {
	caps := Capabilities{
		LocalLeaser:      c,
		HealthReporter:   c,
		StatusReporter:   c,
		DeadlineReporter: c,

		SlotCompletionReader: c,
	}
	if c.runs != nil {
		caps.RunRecorder, caps.RunHistoryReader = c, c
	}
	return caps
}

// MissedDeadline reports slot of pipelineID once: true unless the slot or
// a later one completed, or this slot or a later one was already reported.
func (c *LocalCoordinator) MissedDeadline(_ context.Context, pipelineID string, slot int64) (bool, error) {
	c.mu.RLock()
	e := c.entries[pipelineID]
	c.mu.RUnlock()
	if e != nil {
		e.mu.Lock()
		done := slot <= e.lastCompleted
		e.mu.Unlock()
		if done {
			return false, nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if last, ok := c.deadlines[pipelineID]; ok && last >= slot {
		return false, nil
	}
	if c.deadlines == nil {
		c.deadlines = make(map[string]int64)
	}
	c.deadlines[pipelineID] = slot
	return true, nil
}

var (
	_ Coordinator = (*LocalCoordinator)(nil)
	_ LocalLeaser = (*LocalCoordinator)(nil)

	_ DeadlineReporter = (*LocalCoordinator)(nil)
)
