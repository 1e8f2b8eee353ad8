package engine

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testConfig is a Pool's configuration on the system clock with an
// in-memory coordinator that grants every lease.
func testConfig() Config {
	c := &memCoordinator{held: map[string]Lease{}}
	return Config{Clock: systemClock{}, Precise: true, Coordinator: c, Capabilities: Capabilities{LocalLeaser: c},
		Logger: slog.New(slog.DiscardHandler), Parent: context.Background(),
		TriggerRetry: time.Millisecond, TriggerPatience: time.Second}
}

func specOf(id string, s Schedule, run func(context.Context) error) Spec {
	return Spec{PipelineID: id, Schedule: s, Factory: FactoryFunc(func(context.Context) (Pipeline, error) { return PipelineFunc(run), nil })}
}

func TestPoolRunsAndShutsDown(t *testing.T) {
	var runs atomic.Int64
	p := New(testConfig(), []Spec{specOf("p", every(10*time.Millisecond), func(context.Context) error {
		runs.Add(1)
		return nil
	})}, []int{0}, true)
	p.Start()
	p.Loop()
	deadline := time.Now().Add(5 * time.Second)
	for runs.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.Shutdown("test", time.Second, nil); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	st := p.Status(0)
	if st.Runs < 3 || st.State != StateStopped || st.PipelineID != "p" || st.Schedule != "every=10ms" {
		t.Fatalf("status after shutdown: %+v", st)
	}
	var read int
	p.EachReading(&Reading{}, func(rd *Reading) {
		read++
		if rd.Index != 0 || rd.Status.Runs != st.Runs || rd.Interval != 10*time.Millisecond {
			t.Errorf("reading %+v", rd)
		}
	})
	if read != 1 {
		t.Fatalf("%d readings", read)
	}
}

func TestPoolStopsAtTooManyErrors(t *testing.T) {
	boom := errors.New("boom")
	sp := specOf("p", NewSchedule(ScheduleContinuous, 0, "", nil), func(context.Context) error { return boom })
	sp.Settings = &Settings{MaxConsecutiveErrors: 2, ErrorBackoff: time.Millisecond}
	p := New(testConfig(), []Spec{sp}, []int{0}, true)
	p.Start()
	p.Loop()
	select {
	case <-p.Terminal():
	case <-time.After(5 * time.Second):
		t.Fatal("the pipeline did not stop")
	}
	_ = p.Shutdown("test", time.Second, nil)
	errs := p.Errors()
	if len(errs) != 1 || !errors.Is(errs[0], ErrTooManyErrors) || !errors.Is(errs[0], boom) {
		t.Fatalf("errors %v", errs)
	}
	select {
	case <-p.AllDone():
	case <-time.After(5 * time.Second):
		t.Fatal("AllDone not closed")
	}
}

func TestPoolRunNow(t *testing.T) {
	boom := errors.New("boom")
	ok := specOf("ok", mustCron("0 0 * * *"), func(context.Context) error { return nil })
	failing := specOf("failing", mustCron("0 0 * * *"), func(context.Context) error { return boom })
	panicking := Spec{PipelineID: "panicking", Schedule: mustCron("0 0 * * *"),
		Factory: FactoryFunc(func(context.Context) (Pipeline, error) { panic("no") })}
	p := New(testConfig(), []Spec{ok, failing, panicking}, []int{0, 1, 2}, false)
	err := p.RunNow()
	if !errors.Is(err, ErrRunFailed) || !errors.Is(err, boom) || !strings.Contains(err.Error(), "panic in factory: no") {
		t.Fatalf("RunNow = %v", err)
	}
	if strings.Contains(err.Error(), `"ok"`) {
		t.Fatalf("the pipeline that succeeded is named: %v", err)
	}
	if st := p.Status(0); st.Outcomes.Succeeded != 1 { // RunNow publishes no plan, only the counts
		t.Fatalf("status of ok: %+v", st)
	}
	if st := p.Status(2); st.Outcomes.Panicked != 1 {
		t.Fatalf("status of panicking: %+v", st)
	}
}

func TestPoolTriggerAndLostLease(t *testing.T) {
	started, release := make(chan map[string]string, 1), make(chan struct{})
	sp := specOf("p", mustCron("0 0 1 1 *"), func(ctx context.Context) error {
		started <- ParamsFromContext(ctx)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	p := New(testConfig(), []Spec{sp}, []int{0}, true)
	p.Start()
	p.Loop()
	p.Trigger("unknown", nil, true) // logged and ignored
	p.Trigger("p", map[string]string{"k": "v"}, false)
	p.Trigger("p", map[string]string{"k": "v"}, true)
	if params := <-started; params["k"] != "v" {
		t.Fatalf("the triggered run got params %v", params)
	}
	p.LeaseLost("unknown", Lease{})
	p.LeaseLost("p", Lease{})
	deadline := time.Now().Add(5 * time.Second)
	for p.Status(0).Runs == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := p.Status(0); st.Runs != 1 || st.LeaseLost != 1 || !strings.Contains(st.LastError, ErrLeaseLost.Error()) {
		t.Fatalf("status after a lost lease: %+v", st)
	}
	close(release)
	if err := p.Shutdown("test", time.Second, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPoolQuietAndExecutors(t *testing.T) {
	p := New(testConfig(), []Spec{specOf("p", mustCron("0 0 1 1 *"), func(context.Context) error { return nil })}, []int{0}, true)
	p.Start()
	p.Loop()
	if quiet, ok := p.Quiet(); !quiet || !ok {
		t.Fatalf("Quiet = %v, %v", quiet, ok)
	}
	if quiet, ok := p.Runner(0).Quiet(); !quiet || !ok {
		t.Fatalf("Runner.Quiet = %v, %v", quiet, ok)
	}
	if total, busy := p.Executors(); busy != 0 || total < 0 {
		t.Fatalf("Executors = %d, %d", total, busy)
	}
	p.Runner(0).Stop()
	select {
	case <-p.AllDone():
	case <-time.After(5 * time.Second):
		t.Fatal("a stopped runner did not finish")
	}
	_ = p.Shutdown("test", time.Second, nil)
	if _, ok := p.Quiet(); ok {
		t.Fatal("Quiet after the loop stopped")
	}
}
