package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// forEachMode runs body once with runtime.ScheduledPipeline.Start and once in a
// runtime.WorkerPool.
func forEachMode(t *testing.T, body func(t *testing.T, clock *clocktest.Fake, d driver, logs *syncBuffer)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			clock := clocktest.NewFake(t0)
			logs := &syncBuffer{}
			body(t, clock, m.new(clock, logs), logs)
		})
	}
}

func failingFactory(clock *clocktest.Fake, rec *recorder, err error) runtime.Factory {
	return func(ctx context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			l, _ := runtime.LeaseFromContext(ctx)
			rec.add(clock.Now(), l)
			return err
		}), nil
	}
}

func TestBackoffSequenceIsExact(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		sp := &runtime.ScheduledPipeline{PipelineID: "failing", Schedule: runtime.Continuous(), Factory: failingFactory(clock, rec, errors.New("boom"))}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(2*time.Hour), func() bool { return rec.count() >= 7 })
		want := []time.Duration{60 * time.Second, 120 * time.Second, 240 * time.Second, 480 * time.Second, 600 * time.Second, 600 * time.Second}
		if got := gaps(rec.times())[:6]; !reflect.DeepEqual(got, want) {
			t.Fatalf("gaps between failed attempts = %v, want %v", got, want)
		}
		if first := rec.times()[0]; !first.Equal(t0) {
			t.Fatalf("first attempt at %v, want %v", first, t0)
		}
		if err := d.stop(t); err != nil {
			t.Fatalf("stop: %v", err)
		}
	})
}

func TestBackoffUsesErrorBackoffAndResetsOnSuccess(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		var n atomic.Int32
		sp := &runtime.ScheduledPipeline{PipelineID: "flaky", Schedule: runtime.Continuous(), ErrorBackoff: 10 * time.Second,
			Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					rec.add(clock.Now(), runtime.Lease{})
					switch n.Add(1) {
					case 3: // fail, fail, success, fail, fail, then stop
						return nil
					case 6:
						return errStopTest
					}
					return errors.New("flaky")
				}), nil
			}, MaxConsecutiveErrors: 3}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return rec.count() >= 6 })
		want := []time.Duration{10 * time.Second, 20 * time.Second, 0, 10 * time.Second, 20 * time.Second}
		if got := gaps(rec.times()); !reflect.DeepEqual(got, want) {
			t.Fatalf("gaps = %v, want %v", got, want)
		}
		err := d.result(t)
		if !errors.Is(err, runtime.ErrTooManyErrors) || !errors.Is(err, errStopTest) {
			t.Fatalf("result = %v, want ErrTooManyErrors wrapping the last error", err)
		}
	})
}

var errStopTest = errors.New("last failure")

func TestMaxConsecutiveErrorsStops(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, logs *syncBuffer) {
		rec := &recorder{}
		sp := &runtime.ScheduledPipeline{PipelineID: "doomed", Schedule: runtime.Every(time.Minute), MaxConsecutiveErrors: 3,
			ErrorBackoff: time.Second, Factory: failingFactory(clock, rec, errStopTest)}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return rec.count() >= 3 })
		err := d.result(t)
		if !errors.Is(err, runtime.ErrTooManyErrors) || !errors.Is(err, errStopTest) {
			t.Fatalf("result = %v, want runtime.ErrTooManyErrors and the last error", err)
		}
		if !strings.Contains(err.Error(), `"doomed"`) || !strings.Contains(err.Error(), "3 consecutive") {
			t.Fatalf("error does not say which pipeline and how many failures: %v", err)
		}
		if rec.count() != 3 {
			t.Fatalf("attempts = %d, want 3", rec.count())
		}
		if want := []time.Duration{time.Second, 2 * time.Second}; !reflect.DeepEqual(gaps(rec.times()), want) {
			t.Fatalf("gaps = %v, want %v", gaps(rec.times()), want)
		}
	})
}

func TestEveryStartsTimerWhenRunFinishes(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		sp := &runtime.ScheduledPipeline{PipelineID: "slow", Schedule: runtime.Every(time.Hour),
			Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					l, _ := runtime.LeaseFromContext(ctx)
					rec.add(clock.Now(), l)
					clock.Advance(45 * time.Minute) // the run takes 45 minutes
					return nil
				}), nil
			}}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(10*time.Hour), func() bool { return rec.count() >= 3 })
		want := []time.Time{t0, t0.Add(105 * time.Minute), t0.Add(210 * time.Minute)}
		if got := rec.times()[:3]; !reflect.DeepEqual(got, want) {
			t.Fatalf("run starts = %v, want %v", got, want)
		}
		// Run numbers name the hour window the run starts in.
		for i, n := range rec.runNumbers()[:3] {
			if w := want[i].Truncate(time.Hour).Unix(); n != w {
				t.Errorf("run %d number = %d, want window start %d", i, n, w)
			}
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCronRunsAtNextTimes(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		sp := &runtime.ScheduledPipeline{PipelineID: "quarterly", Schedule: runtime.MustCron("*/15 * * * *"), Factory: failingFactory(clock, rec, nil)}
		d.start(t, sp)
		advanceTo(t, clock, d, t0.Add(50*time.Minute))
		base := time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)
		want := []time.Time{base.Add(15 * time.Minute), base.Add(30 * time.Minute), base.Add(45 * time.Minute)}
		if got := rec.times(); !reflect.DeepEqual(got, want) {
			t.Fatalf("runs at %v, want %v", got, want)
		}
		for i, n := range rec.runNumbers() {
			if n != want[i].Unix() {
				t.Errorf("run %d number = %d, want the fire time %d", i, n, want[i].Unix())
			}
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCronFailureRetriesSameSlotThenMovesOn(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		sp := &runtime.ScheduledPipeline{PipelineID: "c", Schedule: runtime.MustCron("*/5 * * * *"), ErrorBackoff: 2 * time.Minute,
			Factory: failingFactory(clock, rec, errors.New("down"))}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return rec.count() >= 3 })
		slot := time.Date(2025, 3, 10, 10, 10, 0, 0, time.UTC)
		// 10:10 fails; retry after 2m at 10:12 (same slot); the next backoff
		// (4m) ends at 10:16, after the 10:15 slot, so the first slot after
		// it, 10:20, runs next.
		wantTimes := []time.Time{slot, slot.Add(2 * time.Minute), slot.Add(10 * time.Minute)}
		wantNums := []int64{slot.Unix(), slot.Unix(), slot.Add(10 * time.Minute).Unix()}
		if got := rec.times()[:3]; !reflect.DeepEqual(got, wantTimes) {
			t.Fatalf("attempts at %v, want %v", got, wantTimes)
		}
		if got := rec.runNumbers()[:3]; !reflect.DeepEqual(got, wantNums) {
			t.Fatalf("run numbers %v, want %v", got, wantNums)
		}
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOnceRetriesUntilSuccessThenStops(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		var n atomic.Int32
		sp := &runtime.ScheduledPipeline{PipelineID: "migrate", Schedule: runtime.Once(), ErrorBackoff: 5 * time.Second,
			Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					l, _ := runtime.LeaseFromContext(ctx)
					rec.add(clock.Now(), l)
					if n.Add(1) < 3 {
						return errors.New("not yet")
					}
					return nil
				}), nil
			}}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return rec.count() >= 3 })
		if err := d.result(t); err != nil {
			t.Fatalf("Once should finish cleanly, got %v", err)
		}
		if got, want := gaps(rec.times()), []time.Duration{5 * time.Second, 10 * time.Second}; !reflect.DeepEqual(got, want) {
			t.Fatalf("gaps = %v, want %v", got, want)
		}
		for _, num := range rec.runNumbers() {
			if num != runtime.RunNumberOnce {
				t.Fatalf("Once run number = %d, want runtime.RunNumberOnce", num)
			}
		}
		if rec.count() != 3 {
			t.Fatalf("runs after success: %d", rec.count())
		}
	})
}

func TestContinuousRestartsImmediately(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		var sp *runtime.ScheduledPipeline
		sp = &runtime.ScheduledPipeline{PipelineID: "consumer", Schedule: runtime.Continuous(),
			Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					l, _ := runtime.LeaseFromContext(ctx)
					rec.add(clock.Now(), l)
					if rec.count() == 5 {
						sp.Stop()
					}
					return nil
				}), nil
			}}
		d.start(t, sp)
		if err := d.result(t); err != nil {
			t.Fatal(err)
		}
		if rec.count() != 5 {
			t.Fatalf("runs = %d, want 5", rec.count())
		}
		for _, ts := range rec.times() {
			if !ts.Equal(t0) {
				t.Fatalf("continuous run waited: %v", ts)
			}
		}
		if got, want := rec.runNumbers(), []int64{1, 2, 3, 4, 5}; !reflect.DeepEqual(got, want) {
			t.Fatalf("auto run numbers %v, want %v", got, want)
		}
	})
}

type closingPipeline struct {
	run    func(ctx context.Context) error
	closed *atomic.Int32
}

func (p *closingPipeline) Run(ctx context.Context) error { return p.run(ctx) }
func (p *closingPipeline) Close() error {
	p.closed.Add(1)
	return nil
}

func TestPanicsAreFailedRunsAndClosersAreClosed(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, logs *syncBuffer) {
		var closed, built atomic.Int32
		sp := &runtime.ScheduledPipeline{PipelineID: "panicky", Schedule: runtime.Continuous(), ErrorBackoff: time.Second, MaxConsecutiveErrors: 4,
			Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				switch built.Add(1) {
				case 1:
					panic("factory exploded")
				case 2:
					return nil, errors.New("no connection")
				case 3:
					return (*closingPipeline)(nil), nil
				}
				return &closingPipeline{closed: &closed, run: func(ctx context.Context) error {
					panic(fmt.Errorf("run exploded"))
				}}, nil
			}}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return built.Load() >= 4 })
		err := d.result(t)
		var pe *runtime.PanicError
		if !errors.As(err, &pe) || pe.Where != "Run" || !strings.Contains(err.Error(), "run exploded") {
			t.Fatalf("terminal error = %v, want the Run panic", err)
		}
		if closed.Load() != 1 {
			t.Fatalf("Close called %d times, want 1 (after the panicking run)", closed.Load())
		}
		out := logs.String()
		for _, want := range []string{"factory exploded", "run exploded", "no connection", runtime.ErrNilPipeline.Error(), "goroutine", "\"stack\""} {
			if !strings.Contains(out, want) {
				t.Errorf("logs lack %q", want)
			}
		}
	})
}

type closeCounter struct {
	closed *atomic.Int32
	err    error
}

func (c *closeCounter) Run(context.Context) error { return nil }
func (c *closeCounter) Close() error {
	c.closed.Add(1)
	return c.err
}

func TestCloserClosedAfterEveryRunAndCloseErrorFails(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		var closed atomic.Int32
		var calls atomic.Int32
		sp := &runtime.ScheduledPipeline{PipelineID: "closer", Schedule: runtime.Every(time.Minute), MaxConsecutiveErrors: 1,
			Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				var err error
				if calls.Add(1) == 3 {
					err = errors.New("flush failed")
				}
				return &closeCounter{closed: &closed, err: err}, nil
			}}
		d.start(t, sp)
		advanceUntil(t, clock, d, t0.Add(time.Hour), func() bool { return calls.Load() >= 3 })
		err := d.result(t)
		if err == nil || !strings.Contains(err.Error(), "flush failed") {
			t.Fatalf("a Close error must fail the run, got %v", err)
		}
		if closed.Load() != 3 {
			t.Fatalf("closed %d times, want 3", closed.Load())
		}
	})
}

func TestStopWakesSleepingScheduler(t *testing.T) {
	forEachMode(t, func(t *testing.T, clock *clocktest.Fake, d driver, _ *syncBuffer) {
		rec := &recorder{}
		sp := &runtime.ScheduledPipeline{PipelineID: "daily", Schedule: runtime.MustCron("0 3 * * *"), Factory: failingFactory(clock, rec, nil)}
		d.start(t, sp)
		d.settle(t)
		start := time.Now()
		if err := d.stop(t); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("Stop took %v", el)
		}
		if rec.count() != 0 {
			t.Fatalf("ran %d times", rec.count())
		}
	})
}

func TestStartRejectsInvalidAndDoubleStart(t *testing.T) {
	err := (&runtime.ScheduledPipeline{Schedule: runtime.Every(0)}).Start(context.Background())
	if !errors.Is(err, runtime.ErrInvalidPipeline) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"empty PipelineID", "nil Factory", "must be positive"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	clock := clocktest.NewFake(t0)
	sp := &runtime.ScheduledPipeline{PipelineID: "x", Schedule: runtime.MustCron("0 0 * * *"), Clock: clock, Factory: failingFactory(clock, &recorder{}, nil)}
	done := make(chan error, 1)
	go func() { done <- sp.Start(context.Background()) }()
	clock.WaitForTimers(1, 5*time.Second)
	if err := sp.Start(context.Background()); !errors.Is(err, runtime.ErrAlreadyRunning) {
		t.Fatalf("second Start = %v, want runtime.ErrAlreadyRunning", err)
	}
	sp.Stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestStartContextCancelCancelsRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var cause atomic.Value
	sp := &runtime.ScheduledPipeline{PipelineID: "x", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			cause.Store(ctx.Err())
			return ctx.Err()
		}), nil
	}}
	done := make(chan error, 1)
	go func() { done <- sp.Start(ctx) }()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Start = %v", err)
	}
	if cause.Load() != context.Canceled {
		t.Fatalf("run ctx err = %v", cause.Load())
	}
}

func TestStandaloneStopClosesShutdownRequested(t *testing.T) {
	var sp *runtime.ScheduledPipeline
	batches := atomic.Int32{}
	sp = &runtime.ScheduledPipeline{PipelineID: "loop", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			for {
				select {
				case <-runtime.ShutdownRequested(ctx):
					if ctx.Err() != nil {
						return errors.New("context cancelled before the batch finished")
					}
					return nil
				default:
				}
				if batches.Add(1) == 3 {
					go sp.Stop()
				}
				time.Sleep(time.Millisecond)
			}
		}), nil
	}}
	if err := sp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if batches.Load() < 3 {
		t.Fatalf("batches = %d", batches.Load())
	}
}
