package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// fakeCoord is a scriptable Coordinator that hands out fenced leases and
// records every call.
type fakeCoord struct {
	mu       sync.Mutex
	token    int64
	decide   func(id string, runNumber int64) (bool, error)
	held     map[string]runtime.Lease
	granted  map[string]int64 // the last token granted per pipeline
	calls    []string
	kinds    []runtime.RunKind // of every run number asked for
	lost     func(string, runtime.Lease)
	healthy  error
	workerID string
	ids      []string
	status   any
	// startGate, when set, holds Start until it is closed.
	startGate chan struct{}
	// hangAcquire, when set, makes TryAcquireLease wait for its context and
	// closes acquiring when it starts waiting.
	hangAcquire bool
	acquiring   chan struct{}
	// grantRun, when set, names the run number a grant is for (a
	// coordinator handing out an interrupted earlier slot); nil: the one
	// asked for.
	grantRun func(id string, n int64) int64
}

// Capabilities: a fakeCoord reports health and status.
func (c *fakeCoord) Capabilities() runtime.Capabilities {
	return runtime.Capabilities{HealthReporter: c, StatusReporter: c}
}

func newFakeCoord() *fakeCoord {
	return &fakeCoord{held: map[string]runtime.Lease{}, granted: map[string]int64{}, token: 100}
}

func (c *fakeCoord) record(format string, args ...any) {
	c.calls = append(c.calls, fmt.Sprintf(format, args...))
}

func (c *fakeCoord) Start(_ context.Context, workerID string, ids []string) error {
	if c.startGate != nil {
		<-c.startGate
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.workerID, c.ids = workerID, append([]string(nil), ids...)
	c.record("start")
	return nil
}

func (c *fakeCoord) Stop(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.record("stop")
	return nil
}

func (c *fakeCoord) TryAcquireLease(ctx context.Context, id string, n int64) (bool, error) {
	// The fake decides and grants by the plain number (a slot's second),
	// and remembers the kinds it was asked for.
	kind := runtime.RunKindOf(n)
	n = runtime.RunValue(n)
	c.mu.Lock()
	c.kinds = append(c.kinds, kind)
	decide, hang := c.decide, c.hangAcquire
	c.mu.Unlock()
	if hang {
		close(c.acquiring)
		<-ctx.Done()
		return false, context.Cause(ctx)
	}
	if decide != nil {
		if ok, err := decide(id, n); !ok || err != nil {
			c.mu.Lock()
			c.record("refuse %s", id)
			c.mu.Unlock()
			return ok, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token++
	run := n
	if c.grantRun != nil {
		run = c.grantRun(id, n)
	}
	c.held[id] = runtime.Lease{PipelineID: id, WorkerID: c.workerID, RunNumber: run, Slot: kind == runtime.RunSlot, FencingToken: c.token, AcquiredAt: time.Now()}
	c.granted[id] = c.token
	c.record("acquire %s", id)
	return true, nil
}

func (c *fakeCoord) ReleaseLease(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, id)
	c.record("release %s", id)
	return nil
}

func (c *fakeCoord) CompleteLease(ctx context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		c.record("complete-with-dead-context %s", id)
	}
	delete(c.held, id)
	c.record("complete %s", id)
	return nil
}

func (c *fakeCoord) RenewLease(context.Context, string) error { return nil }

func (c *fakeCoord) ValidateLease(_ context.Context, id string, token int64) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[id].FencingToken == token, nil
}

func (c *fakeCoord) CurrentLease(id string) (runtime.Lease, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.held[id]
	return l, ok
}

func (c *fakeCoord) SetLeaseLostCallback(cb func(string, runtime.Lease)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost = cb
}

func (c *fakeCoord) Healthy(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.healthy
}

func (c *fakeCoord) Status() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *fakeCoord) setHealthy(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.healthy = err
}

func (c *fakeCoord) loseLease(id string, l runtime.Lease) {
	c.mu.Lock()
	cb := c.lost
	c.mu.Unlock()
	cb(id, l)
}

func (c *fakeCoord) callLog() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

// lastToken returns the fencing token of the last lease granted for id.
func (c *fakeCoord) lastToken(id string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.granted[id]
}
