package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

func nopFactory(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}

func quietPool(opts ...runtime.PoolOption) *runtime.WorkerPool {
	logs := &syncBuffer{}
	return runtime.NewWorkerPool(append([]runtime.PoolOption{runtime.WithLogger(testLogger(logs)), runtime.WithSignalHandling(false)}, opts...)...)
}

func runAsync(pool *runtime.WorkerPool, ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	return done
}

func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestValidationNamesEveryProblemAndStartsNothing(t *testing.T) {
	coord := newFakeCoord()
	var built atomic.Int32
	counting := func(ctx context.Context) (runtime.Pipeline, error) { built.Add(1); return nopFactory(ctx) }
	pool := quietPool(runtime.WithCoordinator(coord), runtime.WithGracefulShutdownTimeout(-time.Second), runtime.WithHealthPort(70000)).
		Register(&runtime.ScheduledPipeline{PipelineID: "ok", Schedule: runtime.Continuous(), Factory: counting}).
		Register(&runtime.ScheduledPipeline{PipelineID: "", Schedule: runtime.Continuous(), Factory: counting}).
		Register(&runtime.ScheduledPipeline{PipelineID: "ok", Schedule: runtime.Continuous(), Factory: counting}).
		Register(&runtime.ScheduledPipeline{PipelineID: "nofactory", Schedule: runtime.Continuous()}).
		Register(&runtime.ScheduledPipeline{PipelineID: "noschedule", Factory: counting}).
		Register(&runtime.ScheduledPipeline{PipelineID: "zero-every", Schedule: runtime.Every(0), Factory: counting}).
		Register(&runtime.ScheduledPipeline{PipelineID: "negative-every", Schedule: runtime.Every(-time.Minute), Factory: counting}).
		Register(nil)
	err := pool.Run(context.Background())
	if !errors.Is(err, runtime.ErrInvalidPipeline) {
		t.Fatalf("Run = %v, want ErrInvalidPipeline", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`pipeline #2 (""): empty PipelineID`,
		`pipeline #3: duplicate PipelineID "ok" (also pipeline #1)`,
		`pipeline #4 ("nofactory"): nil Factory`,
		`pipeline #5 ("noschedule"): runtime: invalid schedule: no schedule set`,
		`pipeline #6 ("zero-every"): runtime: invalid schedule: every=0s must be positive`,
		`pipeline #7 ("negative-every"): runtime: invalid schedule: every=-1m0s must be positive`,
		`pipeline #8: nil *ScheduledPipeline`,
		`health port 70000 out of range`,
		`negative graceful shutdown timeout`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Count(msg, "\n") != 8 {
		t.Errorf("want 9 problems, one per line:\n%s", msg)
	}
	if built.Load() != 0 || len(coord.callLog()) != 0 {
		t.Fatalf("something started: factory calls %d, coordinator calls %v", built.Load(), coord.callLog())
	}
}

func TestEmptyPoolIsAnError(t *testing.T) {
	if err := quietPool().Run(context.Background()); !errors.Is(err, runtime.ErrInvalidPipeline) {
		t.Fatalf("Run = %v", err)
	}
}

func TestPoolRunsOnce(t *testing.T) {
	pool := quietPool().Register(&runtime.ScheduledPipeline{PipelineID: "once", Schedule: runtime.Once(), Factory: nopFactory})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(context.Background()); !errors.Is(err, runtime.ErrAlreadyRunning) {
		t.Fatalf("second Run = %v", err)
	}
}

// TestGracefulShutdownSequence checks the order: shutdown state, Stop,
// the run finishing with a live context after seeing ShutdownRequested,
// then coordinator Stop.
func TestGracefulShutdownSequence(t *testing.T) {
	coord := newFakeCoord()
	inRun := make(chan struct{})
	var sawShutdownAlive atomic.Bool
	var idleRuns atomic.Int32
	pool := quietPool(runtime.WithCoordinator(coord), runtime.WithWorkerID("w1"), runtime.WithHealthAddr("127.0.0.1:0")).
		Register(&runtime.ScheduledPipeline{PipelineID: "consumer", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				close(inRun)
				<-runtime.ShutdownRequested(ctx)
				time.Sleep(50 * time.Millisecond) // finish the batch
				sawShutdownAlive.Store(ctx.Err() == nil)
				return nil
			}), nil
		}}).
		Register(&runtime.ScheduledPipeline{PipelineID: "hourly", Schedule: runtime.MustCron("0 * * * *"), Factory: func(ctx context.Context) (runtime.Pipeline, error) {
			idleRuns.Add(1)
			return nopFactory(ctx)
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	waitClosed(t, inRun, "the run")
	if got := pool.Status().State; got != "running" {
		t.Fatalf("state = %q", got)
	}
	cancel()
	// While the run finishes its batch the pool reports shutting_down.
	deadline := time.Now().Add(5 * time.Second)
	for pool.Status().State != "shutting_down" && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := pool.Status(); st.State != "shutting_down" && st.State != "stopped" {
		t.Fatalf("state during shutdown = %q", st.State)
	}
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if !sawShutdownAlive.Load() {
		t.Fatal("the run's context was cancelled before it finished")
	}
	calls := coord.callLog()
	want := []string{"start", "acquire consumer", "complete consumer", "stop"}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("coordinator calls = %v, want %v", calls, want)
	}
	if coord.workerID != "w1" || !reflect.DeepEqual(coord.ids, []string{"consumer", "hourly"}) {
		t.Fatalf("coordinator started with %q %v", coord.workerID, coord.ids)
	}
	if idleRuns.Load() != 0 {
		t.Fatal("hourly pipeline ran")
	}
	if pool.Status().State != "stopped" {
		t.Fatalf("final state %q", pool.Status().State)
	}
}

func TestGracefulTimeoutCancelsStuckRun(t *testing.T) {
	clock := clocktest.NewFake(t0)
	inRun := make(chan struct{})
	var cause atomic.Value
	pool := quietPool(runtime.WithClock(clock), runtime.WithGracefulShutdownTimeout(30*time.Second)).
		Register(&runtime.ScheduledPipeline{PipelineID: "stuck", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				close(inRun)
				<-ctx.Done() // ignores ShutdownRequested
				cause.Store(context.Cause(ctx))
				return ctx.Err()
			}), nil
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	waitClosed(t, inRun, "the run")
	cancel()
	var err error
	for i := 0; ; i++ {
		select {
		case err = <-done:
		default:
			if i > 2000 {
				t.Fatal("graceful timeout never fired")
			}
			if clock.Now().Sub(t0) < 29*time.Second || cause.Load() == nil {
				clock.Advance(time.Second)
			}
			// Before 30 s have passed the run must still be alive.
			if clock.Now().Sub(t0) < 30*time.Second && cause.Load() != nil {
				t.Fatalf("run cancelled after only %v", clock.Now().Sub(t0))
			}
			time.Sleep(time.Millisecond)
			continue
		}
		break
	}
	if !errors.Is(err, runtime.ErrGracefulTimeout) || !strings.Contains(err.Error(), "stuck") {
		t.Fatalf("Run = %v, want ErrGracefulTimeout naming the pipeline", err)
	}
	if c, _ := cause.Load().(error); !errors.Is(c, runtime.ErrGracefulTimeout) {
		t.Fatalf("run context cause = %v", c)
	}
}

func TestSecondSignalCancelsAtOnce(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	inRun := make(chan struct{})
	sawShutdown := make(chan struct{})
	var cause atomic.Value
	pool := quietPool(runtime.WithSignalChannel(sigs)).
		Register(&runtime.ScheduledPipeline{PipelineID: "stubborn", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				close(inRun)
				<-runtime.ShutdownRequested(ctx)
				close(sawShutdown)
				<-ctx.Done()
				cause.Store(context.Cause(ctx))
				return ctx.Err()
			}), nil
		}})
	done := runAsync(pool, context.Background())
	waitClosed(t, inRun, "the run")
	sigs <- os.Interrupt
	waitClosed(t, sawShutdown, "ShutdownRequested")
	select {
	case <-done:
		t.Fatal("Run returned after the first signal")
	case <-time.After(50 * time.Millisecond):
	}
	start := time.Now()
	sigs <- syscall.SIGTERM
	err := waitErr(t, done)
	if !errors.Is(err, runtime.ErrForcedShutdown) {
		t.Fatalf("Run = %v, want ErrForcedShutdown", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("forced shutdown took %v", el)
	}
	if c, _ := cause.Load().(error); !errors.Is(c, runtime.ErrForcedShutdown) {
		t.Fatalf("cause = %v", c)
	}
}

func TestTerminalErrorShutsPoolDownGracefully(t *testing.T) {
	clock := clocktest.NewFake(t0)
	inRun := make(chan struct{})
	var otherAlive atomic.Bool
	var attempts atomic.Int32
	pool := quietPool(runtime.WithClock(clock)).
		Register(&runtime.ScheduledPipeline{PipelineID: "bad", Schedule: runtime.Every(time.Minute), MaxConsecutiveErrors: 2, ErrorBackoff: time.Second,
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					if attempts.Add(1) == 1 {
						<-inRun // let the other pipeline start first
					}
					return errors.New("broken")
				}), nil
			}}).
		Register(&runtime.ScheduledPipeline{PipelineID: "good", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				select {
				case <-inRun:
					return nil
				default:
				}
				close(inRun)
				<-runtime.ShutdownRequested(ctx)
				otherAlive.Store(ctx.Err() == nil)
				return nil
			}), nil
		}})
	done := runAsync(pool, context.Background())
	var err error
	for {
		select {
		case err = <-done:
		default:
			clock.Advance(500 * time.Millisecond)
			time.Sleep(time.Millisecond)
			continue
		}
		break
	}
	if !errors.Is(err, runtime.ErrTooManyErrors) || !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("Run = %v", err)
	}
	if !otherAlive.Load() {
		t.Fatal("the other pipeline's run was not allowed to finish with a live context")
	}
}

func TestEveryPipelineFinishedEndsRun(t *testing.T) {
	var a, b atomic.Int32
	pool := quietPool().
		Register(&runtime.ScheduledPipeline{PipelineID: "a", Schedule: runtime.Once(), Factory: func(ctx context.Context) (runtime.Pipeline, error) { a.Add(1); return nopFactory(ctx) }}).
		Register(&runtime.ScheduledPipeline{PipelineID: "b", Schedule: runtime.Once(), Factory: func(ctx context.Context) (runtime.Pipeline, error) { b.Add(1); return nopFactory(ctx) }})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.Load() != 1 || b.Load() != 1 {
		t.Fatalf("runs a=%d b=%d", a.Load(), b.Load())
	}
	for _, st := range pool.Status().Pipelines {
		if st.State != runtime.StateStopped || st.Runs != 1 {
			t.Fatalf("status %+v", st)
		}
	}
}

func TestLostLeaseCancelsTheRun(t *testing.T) {
	coord := newFakeCoord()
	started := make(chan runtime.Lease, 4)
	causes := make(chan error, 4)
	logs := &syncBuffer{}
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(testLogger(logs)), runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "leased", Schedule: runtime.Continuous(), ErrorBackoff: time.Millisecond, Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				l, _ := runtime.LeaseFromContext(ctx)
				started <- l
				select {
				case <-ctx.Done():
					causes <- context.Cause(ctx)
					return ctx.Err()
				case <-runtime.ShutdownRequested(ctx):
					return nil
				}
			}), nil
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	l := <-started
	if l.FencingToken != 101 || l.PipelineID != "leased" {
		t.Fatalf("run lease = %+v", l)
	}
	// A report about an older lease must not cancel this run.
	coord.loseLease("leased", runtime.Lease{PipelineID: "leased", FencingToken: 50})
	select {
	case c := <-causes:
		t.Fatalf("stale loss cancelled the run: %v", c)
	case <-time.After(20 * time.Millisecond):
	}
	coord.loseLease("leased", l)
	select {
	case c := <-causes:
		if !errors.Is(c, runtime.ErrLeaseLost) {
			t.Fatalf("cause = %v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lost lease did not cancel the run")
	}
	// The pipeline goes on with a new lease after its backoff.
	l2 := <-started
	if l2.FencingToken <= l.FencingToken {
		t.Fatalf("new lease %+v", l2)
	}
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, `"msg":"lease lost: cancelling the run","pipeline_id":"leased","fencing_token":101`) {
		t.Fatalf("lease-lost log line missing or without attributes:\n%s", out)
	}
	// The failed run released (not completed) its lease.
	if calls := coord.callLog(); !contains(calls, "release leased") {
		t.Fatalf("calls %v", calls)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSkippedAttemptsAreCountedNotFailures(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFakeCoord()
	var mu sync.Mutex
	answers := []error{nil, runtime.ErrSlotCompleted, errors.New("redis down"), nil}
	grant := []bool{false, false, false, true}
	coord.decide = func(id string, n int64) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(answers) == 0 {
			return true, nil
		}
		ok, err := grant[0], answers[0]
		grant, answers = grant[1:], answers[1:]
		return ok, err
	}
	rec := &recorder{}
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "minutely", Schedule: runtime.MustCron("* * * * *"), Factory: failingFactory(clock, rec, nil)})
	advanceTo(t, clock, d, t0.Add(4*time.Minute))
	st := d.status(t, "minutely")
	if st.Skipped != 2 || st.LeaseErrors != 1 || st.Runs != 1 || st.Failures != 0 || st.ConsecutiveErrors != 0 {
		t.Fatalf("status = %+v", st)
	}
	// Only the fourth slot (10:11) ran; the refused ones were not retried.
	if got := rec.times(); len(got) != 1 || !got[0].Equal(time.Date(2025, 3, 10, 10, 11, 0, 0, time.UTC)) {
		t.Fatalf("runs at %v", got)
	}
	if !strings.Contains(logs.String(), "redis down") {
		t.Fatal("lease error not logged")
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestContinuousRetriesLeaseAfterRetryInterval(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFakeCoord()
	var refusals atomic.Int32
	coord.decide = func(string, int64) (bool, error) {
		if refusals.Add(1) <= 2 {
			return false, nil
		}
		return true, nil
	}
	rec := &recorder{}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	sp := &runtime.ScheduledPipeline{PipelineID: "c", Schedule: runtime.Continuous()}
	sp.Factory = func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			rec.add(clock.Now(), runtime.Lease{})
			sp.Stop()
			return nil
		}), nil
	}
	d.start(t, sp)
	advanceUntil(t, clock, d, t0.Add(time.Minute), func() bool { return rec.count() == 1 })
	if got := rec.times()[0]; !got.Equal(t0.Add(2 * runtime.LeaseRetryInterval)) {
		t.Fatalf("first run at %v, want two retry intervals after start", got)
	}
	if err := d.result(t); err != nil {
		t.Fatal(err)
	}
}

func TestOnceStopsWhenSlotCompletedElsewhere(t *testing.T) {
	coord := newFakeCoord()
	coord.decide = func(string, int64) (bool, error) { return false, runtime.ErrSlotCompleted }
	var built atomic.Int32
	pool := quietPool(runtime.WithCoordinator(coord)).Register(&runtime.ScheduledPipeline{PipelineID: "migrate", Schedule: runtime.Once(),
		Factory: func(ctx context.Context) (runtime.Pipeline, error) { built.Add(1); return nopFactory(ctx) }})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if built.Load() != 0 {
		t.Fatal("factory called without a lease")
	}
	if st := pool.Status().Pipelines[0]; st.Skipped != 1 || st.State != runtime.StateStopped {
		t.Fatalf("status %+v", st)
	}
}

func TestRunLogLinesCarryRunAttributes(t *testing.T) {
	coord := newFakeCoord()
	logs := &syncBuffer{}
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(testLogger(logs)), runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), ErrorBackoff: time.Millisecond, Factory: func() runtime.Factory {
			var n atomic.Int32
			return func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error {
					if n.Add(1) == 1 {
						return errors.New("first fails")
					}
					return nil
				}), nil
			}
		}()})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var lines int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("bad log line %q", line)
		}
		msg, _ := rec["msg"].(string)
		if msg != "run started" && msg != "run finished" && msg != "run failed" {
			continue
		}
		lines++
		if rec["pipeline_id"] != "p" || rec["run_number"] != float64(runtime.RunNumberOnce) || rec["fencing_token"] == nil {
			t.Errorf("run log line lacks attributes: %s", line)
		}
	}
	if lines != 4 {
		t.Fatalf("run log lines = %d, want 4:\n%s", lines, logs.String())
	}
}

func TestForcedShutdownCancelsLeaseRequestInFlight(t *testing.T) {
	coord := newFakeCoord()
	coord.hangAcquire, coord.acquiring = true, make(chan struct{})
	sigs := make(chan os.Signal, 2)
	pool := quietPool(runtime.WithCoordinator(coord), runtime.WithSignalChannel(sigs)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: nopFactory})
	done := runAsync(pool, context.Background())
	waitClosed(t, coord.acquiring, "the lease request")
	sigs <- os.Interrupt
	select {
	case <-done:
		t.Fatal("Run returned while a lease request was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	start := time.Now()
	sigs <- os.Interrupt
	if err := waitErr(t, done); !errors.Is(err, runtime.ErrForcedShutdown) {
		t.Fatalf("Run = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("forced shutdown took %v", el)
	}
	if st := pool.Status().Pipelines[0]; st.LeaseErrors != 1 || st.Runs != 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestRegisterAfterRunIsIgnored(t *testing.T) {
	inRun := make(chan struct{})
	pool := quietPool().Register(&runtime.ScheduledPipeline{PipelineID: "a", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			select {
			case <-inRun:
			default:
				close(inRun)
			}
			<-runtime.ShutdownRequested(ctx)
			return nil
		}), nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	waitClosed(t, inRun, "the run")
	var late atomic.Bool
	pool.Register(&runtime.ScheduledPipeline{PipelineID: "late", Schedule: runtime.Continuous(), Factory: func(ctx context.Context) (runtime.Pipeline, error) {
		late.Store(true)
		return nopFactory(ctx)
	}})
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	if late.Load() || len(pool.Status().Pipelines) != 1 {
		t.Fatal("a pipeline registered after Run started was run")
	}
}

// TestNilPoolOptionIsIgnored lets an option that may be absent, such as
// distributed.CoordinatorFromEnv without a Redis URL, be passed as is.
func TestNilPoolOptionIsIgnored(t *testing.T) {
	pool := runtime.NewWorkerPool(nil, runtime.WithWorkerID("w-nil"), nil, runtime.WithSignalHandling(false), runtime.WithLogger(testLogger(&syncBuffer{})))
	if pool.WorkerID() != "w-nil" {
		t.Fatalf("WorkerID = %q", pool.WorkerID())
	}
	pool.Register(&runtime.ScheduledPipeline{PipelineID: "once", Schedule: runtime.Once(), Factory: nopFactory})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}
