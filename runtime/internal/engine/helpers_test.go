package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agora-etl/agora/internal/cronspec"
	"github.com/agora-etl/agora/runtime/history"
)

// What the engine's tests use in place of runtime's types, which the
// engine cannot import: a stepping clock, the system clock, schedules and
// an in-memory coordinator that grants every lease.

// steppingClock is a clock tests set by hand; its timers are real.
type steppingClock struct{ t time.Time }

func (c *steppingClock) Now() time.Time { return c.t }

func (c *steppingClock) NewTimer(d time.Duration) Timer { return systemClock{}.NewTimer(d) }

// systemClock is the real clock, as runtime.SystemClock is.
type systemClock struct{}

func (systemClock) Now() time.Time                 { return time.Now() }
func (systemClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// preciseDispatcher is a dispatcher on the system clock, as runtime makes
// one (Config.Precise).
func preciseDispatcher(pipelines int) *dispatcher {
	d := newDispatcher(systemClock{}, nil, pipelines)
	d.precise = true
	return d
}

// PipelineFunc is runtime.PipelineFunc.
type PipelineFunc func(ctx context.Context) error

func (f PipelineFunc) Run(ctx context.Context) error { return f(ctx) }

// mustCron is runtime.MustCron.
func mustCron(expr string) Schedule {
	spec, err := cronspec.Parse(expr)
	if err != nil {
		panic(err)
	}
	return NewSchedule(ScheduleCron, 0, expr, spec)
}

// every is runtime.Every.
func every(d time.Duration) Schedule {
	return NewSchedule(ScheduleEvery, d, "", nil)
}

// memCoordinator grants every lease, in memory, as runtime's local
// coordinator does for a pipeline nobody else runs.
type memCoordinator struct {
	mu   sync.Mutex
	held map[string]Lease
}

// testEnv is the environment of runners on clock with a memCoordinator.
func testEnv(clock Clock, logger *slog.Logger) *runEnv {
	c := &memCoordinator{held: map[string]Lease{}}
	return newRunEnv(Config{Clock: clock, Coordinator: c, Capabilities: Capabilities{LocalLeaser: c},
		Logger: logger, Parent: context.Background()})
}

func (c *memCoordinator) TryAcquireLease(_ context.Context, id string, run int64) (bool, error) {
	_, _, err := c.LocalLeases(id).Acquire(run, time.Now())
	return err == nil, err
}

func (c *memCoordinator) ReleaseLease(_ context.Context, id string) error {
	c.LocalLeases(id).Release(false)
	return nil
}

func (c *memCoordinator) CompleteLease(_ context.Context, id string) error {
	c.LocalLeases(id).Release(true)
	return nil
}

func (c *memCoordinator) CurrentLease(id string) (Lease, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.held[id]
	return l, ok
}

func (c *memCoordinator) LocalLeases(id string) LocalLeases { return memLeases{c, id} }

type memLeases struct {
	c  *memCoordinator
	id string
}

func (m memLeases) Acquire(run int64, now time.Time) (Lease, bool, error) {
	if run > 0 {
		run &^= SlotRunFlag
	}
	l := Lease{PipelineID: m.id, WorkerID: "w", RunNumber: run, AcquiredAt: now, ExpiresAt: now.Add(time.Minute)}
	m.c.mu.Lock()
	m.c.held[m.id] = l
	m.c.mu.Unlock()
	return l, true, nil
}

func (m memLeases) Release(bool) {
	m.c.mu.Lock()
	delete(m.c.held, m.id)
	m.c.mu.Unlock()
}

func (memLeases) Record(history.Record) {}
