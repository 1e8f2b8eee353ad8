package coordinatortest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/coordinatortest"
)

// memFleet is the shared state of a fleet of in-memory coordinators: the
// smallest fenced coordinator that keeps the contract, so the suite's own
// cases (the fleet ones included) are checked without a Redis.
type memFleet struct {
	mu       sync.Mutex
	leases   map[string]*memLease
	tokens   map[string]int64
	done     map[string]int64
	onceDone map[string]bool
	auto     map[string]int64
	reported map[string]int64 // the last slot MissedDeadline reported
}

type memLease struct {
	owner *memCoord
	lease runtime.Lease
}

func newMemFleet() *memFleet {
	return &memFleet{leases: map[string]*memLease{}, tokens: map[string]int64{}, done: map[string]int64{},
		onceDone: map[string]bool{}, auto: map[string]int64{}, reported: map[string]int64{}}
}

// lose drops pipelineID's lease, as an expiry would.
func (f *memFleet) lose(pipelineID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.leases, pipelineID)
}

// memCoord is one worker of a memFleet.
type memCoord struct {
	f      *memFleet
	worker string
	mine   map[string]runtime.Lease // what this worker believes it holds
	lost   func(string, runtime.Lease)
}

func (c *memCoord) Start(_ context.Context, workerID string, _ []string) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	c.worker = workerID
	return nil
}

func (c *memCoord) Stop(context.Context) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	for id, l := range c.f.leases {
		if l.owner == c {
			delete(c.f.leases, id)
		}
	}
	clear(c.mine)
	return nil
}

func (c *memCoord) TryAcquireLease(_ context.Context, id string, run int64) (bool, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if c.f.leases[id] != nil {
		return false, nil
	}
	kind := runtime.RunKindOf(run)
	slot := kind == runtime.RunSlot
	run = runtime.RunValue(run)
	switch {
	case run == runtime.RunNumberOnce && c.f.onceDone[id], slot && run <= c.f.done[id]:
		return false, runtime.ErrSlotCompleted
	case run == runtime.RunNumberAuto:
		c.f.auto[id]++
		run = c.f.auto[id]
	case kind == runtime.RunInvalid:
		return false, fmt.Errorf("invalid run number %d", run)
	}
	c.f.tokens[id]++
	l := runtime.Lease{PipelineID: id, WorkerID: c.worker, RunNumber: run, Slot: slot, FencingToken: c.f.tokens[id], AcquiredAt: time.Now()}
	c.f.leases[id] = &memLease{owner: c, lease: l}
	c.mine[id] = l
	return true, nil
}

func (c *memCoord) finish(id string, completed bool) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	l := c.f.leases[id]
	delete(c.mine, id)
	if l == nil || l.owner != c {
		return errors.New("lease not held")
	}
	delete(c.f.leases, id)
	if completed {
		switch {
		case l.lease.RunNumber == runtime.RunNumberOnce:
			c.f.onceDone[id] = true
		case l.lease.Slot:
			c.f.done[id] = max(c.f.done[id], l.lease.RunNumber)
		}
	}
	return nil
}

func (c *memCoord) ReleaseLease(_ context.Context, id string) error  { return c.finish(id, false) }
func (c *memCoord) CompleteLease(_ context.Context, id string) error { return c.finish(id, true) }

func (c *memCoord) RenewLease(_ context.Context, id string) error {
	c.f.mu.Lock()
	l := c.f.leases[id]
	had, ok := c.mine[id]
	if l != nil && l.owner == c {
		c.f.mu.Unlock()
		return nil
	}
	delete(c.mine, id)
	cb := c.lost
	c.f.mu.Unlock()
	if ok && cb != nil {
		cb(id, had)
	}
	return errors.New("lease not held")
}

func (c *memCoord) ValidateLease(_ context.Context, id string, token int64) (bool, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	l := c.f.leases[id]
	return l != nil && l.lease.FencingToken == token, nil
}

func (c *memCoord) CurrentLease(id string) (runtime.Lease, bool) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if l := c.f.leases[id]; l != nil && l.owner == c {
		return l.lease, true
	}
	return runtime.Lease{}, false
}

func (c *memCoord) SetLeaseLostCallback(cb func(string, runtime.Lease)) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	c.lost = cb
}

func (c *memCoord) TryAcquireLeases(ctx context.Context, reqs []runtime.LeaseRequest) []runtime.LeaseReply {
	out := make([]runtime.LeaseReply, len(reqs))
	for i, r := range reqs {
		out[i].Acquired, out[i].Err = c.TryAcquireLease(ctx, r.PipelineID, r.RunNumber)
	}
	return out
}

func (c *memCoord) Healthy(context.Context) error { return nil }

func (c *memCoord) Status() any { return map[string]string{"kind": "memory"} }

func (c *memCoord) Capabilities() runtime.Capabilities {
	return runtime.Capabilities{BatchLeaser: c, HealthReporter: c, StatusReporter: c, DeadlineReporter: c}
}

// MissedDeadline reports a slot once for the fleet, unless it completed.
func (c *memCoord) MissedDeadline(_ context.Context, id string, slot int64) (bool, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if slot <= c.f.done[id] || slot <= c.f.reported[id] {
		return false, nil
	}
	c.f.reported[id] = slot
	return true, nil
}

// memFleets hands each subtest its own fleet.
type memFleets struct {
	mu     sync.Mutex
	fleets map[string]*memFleet
}

func (m *memFleets) of(t *testing.T) *memFleet {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fleets[t.Name()] == nil {
		m.fleets[t.Name()] = newMemFleet()
	}
	return m.fleets[t.Name()]
}

func (m *memFleets) coordinator(t *testing.T) runtime.Coordinator {
	return &memCoord{f: m.of(t), mine: map[string]runtime.Lease{}}
}

func TestMemoryFleetKeepsTheContract(t *testing.T) {
	m := &memFleets{fleets: map[string]*memFleet{}}
	coordinatortest.Run(t, m.coordinator, coordinatortest.WithLoseLease(func(t *testing.T, _ runtime.Coordinator, id string) {
		m.of(t).lose(id)
	}))
}

// A wrapper that embeds the coordinator passes unchanged.
func TestWrappedMemoryFleetKeepsTheContract(t *testing.T) {
	m := &memFleets{fleets: map[string]*memFleet{}}
	coordinatortest.Run(t, func(t *testing.T) runtime.Coordinator {
		return struct{ runtime.Coordinator }{m.coordinator(t)}
	}, coordinatortest.WithLoseLease(func(t *testing.T, _ runtime.Coordinator, id string) {
		m.of(t).lose(id)
	}))
}
