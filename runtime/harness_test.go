package runtime_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/syncbuf"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/metrics"
)

// t0 is a round start time for fake clocks: 2025-03-10 10:07:30 UTC.
var t0 = time.Date(2025, 3, 10, 10, 7, 30, 0, time.UTC)

// syncBuffer collects logs written from several goroutines.
type syncBuffer = syncbuf.Buffer

func testLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// recorder records the fake time of every run start and end.
type recorder struct {
	mu     sync.Mutex
	starts []time.Time
	leases []runtime.Lease
}

func (r *recorder) add(t time.Time, l runtime.Lease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, t)
	r.leases = append(r.leases, l)
}

func (r *recorder) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.starts...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.starts)
}

func (r *recorder) runNumbers() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int64
	for _, l := range r.leases {
		out = append(out, l.RunNumber)
	}
	return out
}

func gaps(ts []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i].Sub(ts[i-1]))
	}
	return out
}

// driver runs pipelines either alone with runtime.ScheduledPipeline.Start or in a
// runtime.WorkerPool, so each scheduling behaviour is asserted on both paths.
type driver interface {
	// start runs the pipelines in the background.
	start(t *testing.T, sps ...*runtime.ScheduledPipeline)
	// settle returns once nothing moves until the fake clock does.
	settle(t *testing.T)
	// result waits for Start or Run to return.
	result(t *testing.T) error
	// status returns the pipeline's status.
	status(t *testing.T, id string) runtime.PipelineStatus
	// stop stops everything and waits.
	stop(t *testing.T) error
	// useClock makes the code under test read c instead of the fake clock
	// (whose timers still drive it); call before start.
	useClock(c runtime.Clock)
}

type mode struct {
	name string
	new  func(clock *clocktest.Fake, logs *syncBuffer, opts ...runtime.PoolOption) driver
}

var modes = []mode{
	{"standalone", func(c *clocktest.Fake, logs *syncBuffer, _ ...runtime.PoolOption) driver {
		return &standaloneDriver{clock: c, logs: logs}
	}},
	{"pool", func(c *clocktest.Fake, logs *syncBuffer, opts ...runtime.PoolOption) driver {
		return &poolDriver{clock: c, logs: logs, opts: opts}
	}},
}

// exit holds what a driver's Start or Run goroutine returned, once it has.
type exit struct {
	done chan error
	err  error
	got  bool
}

func (e *exit) record(err error) { e.err, e.got = err, true }

// returned reports, without blocking, whether the goroutine has returned.
func (e *exit) returned() bool {
	if e.got {
		return true
	}
	select {
	case err := <-e.done:
		e.record(err)
		return true
	default:
		return false
	}
}

// wait returns what the goroutine returned, failing the test if what (Start
// or Run) does not return within 5 s.
func (e *exit) wait(t *testing.T, what string) error {
	t.Helper()
	if e.got {
		return e.err
	}
	select {
	case err := <-e.done:
		e.record(err)
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

type standaloneDriver struct {
	clock *clocktest.Fake
	code  runtime.Clock
	logs  *syncBuffer
	sp    *runtime.ScheduledPipeline
	exit
}

func (d *standaloneDriver) start(t *testing.T, sps ...*runtime.ScheduledPipeline) {
	t.Helper()
	if len(sps) != 1 {
		t.Fatalf("standalone driver runs one pipeline")
	}
	d.sp = sps[0]
	d.sp.Clock = d.clock
	if d.code != nil {
		d.sp.Clock = d.code
	}
	d.done = make(chan error, 1)
	prev := slog.Default()
	slog.SetDefault(testLogger(d.logs))
	t.Cleanup(func() { slog.SetDefault(prev) })
	go func() { d.done <- d.sp.Start(context.Background()) }()
	deadline := time.Now().Add(5 * time.Second)
	for !d.sp.Running() && time.Now().Before(deadline) {
		if d.returned() {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// settle waits until no run is in flight and the dispatcher of the pool
// Start runs the pipeline in has handled everything, or Start returned.
func (d *standaloneDriver) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if d.returned() {
			return
		}
		quiet, ok := d.sp.Quiet()
		if quiet {
			return
		}
		if !ok {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		time.Sleep(50 * time.Microsecond)
	}
	t.Fatalf("standalone scheduler did not settle")
}

func (d *standaloneDriver) result(t *testing.T) error {
	t.Helper()
	return d.wait(t, "Start")
}

func (d *standaloneDriver) status(t *testing.T, id string) runtime.PipelineStatus {
	t.Helper()
	t.Fatalf("standalone has no status")
	return runtime.PipelineStatus{}
}

func (d *standaloneDriver) stop(t *testing.T) error {
	d.sp.Stop()
	return d.result(t)
}

type poolDriver struct {
	clock *clocktest.Fake
	code  runtime.Clock
	logs  *syncBuffer
	opts  []runtime.PoolOption
	pool  *runtime.WorkerPool
	// metrics are the pool's, given before opts as a worker binary's
	// are; WithMetrics(nil) in opts takes them back.
	metrics *metrics.Metrics
	exit
}

func (d *poolDriver) start(t *testing.T, sps ...*runtime.ScheduledPipeline) {
	t.Helper()
	var clock runtime.Clock = d.clock
	if d.code != nil {
		clock = d.code
	}
	d.metrics = metrics.New()
	opts := append([]runtime.PoolOption{runtime.WithClock(clock), runtime.WithLogger(testLogger(d.logs)), runtime.WithSignalHandling(false),
		runtime.WithMetrics(d.metrics)}, d.opts...)
	d.pool = runtime.NewWorkerPool(opts...)
	for _, sp := range sps {
		d.pool.Register(sp)
	}
	d.done = make(chan error, 1)
	go func() { d.done <- d.pool.Run(context.Background()) }()
	select {
	case <-d.pool.Started():
	case err := <-d.done:
		d.record(err)
	case <-time.After(5 * time.Second):
		t.Fatalf("pool did not start")
	}
}

// settle waits until no run is in flight and the dispatcher has handled
// everything, i.e. only a fake-clock move can make something happen.
func (d *poolDriver) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if d.returned() {
			return
		}
		quiet, ok := d.pool.Quiet()
		if quiet {
			return
		}
		if !ok {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		time.Sleep(50 * time.Microsecond)
	}
	t.Fatalf("pool did not settle")
}

func (d *poolDriver) result(t *testing.T) error {
	t.Helper()
	return d.wait(t, "Run")
}

func (d *poolDriver) status(t *testing.T, id string) runtime.PipelineStatus {
	t.Helper()
	for _, st := range d.pool.Status().Pipelines {
		if st.PipelineID == id {
			return st
		}
	}
	t.Fatalf("no status for %q", id)
	return runtime.PipelineStatus{}
}

func (d *standaloneDriver) useClock(c runtime.Clock) { d.code = c }
func (d *poolDriver) useClock(c runtime.Clock)       { d.code = c }

func (d *poolDriver) stop(t *testing.T) error {
	for _, sp := range d.pool.Pipelines() {
		sp.Stop()
	}
	return d.result(t)
}

// advanceTo moves the fake clock to target one timer deadline at a time,
// letting the code under test settle in between.
func advanceTo(t *testing.T, c *clocktest.Fake, d driver, target time.Time) {
	t.Helper()
	for {
		d.settle(t)
		dl, ok := c.NextDeadline()
		if !ok || dl.After(target) {
			if c.Now().Before(target) {
				c.Set(target)
			}
			d.settle(t)
			return
		}
		c.Set(dl)
	}
}

// advanceUntil moves the fake clock timer by timer until cond holds or limit
// passes.
func advanceUntil(t *testing.T, c *clocktest.Fake, d driver, limit time.Time, cond func() bool) {
	t.Helper()
	for !cond() {
		d.settle(t)
		if cond() {
			return
		}
		dl, ok := c.NextDeadline()
		if !ok || dl.After(limit) {
			t.Fatalf("condition not met by %v (now %v)", limit, c.Now())
		}
		c.Set(dl)
	}
}
