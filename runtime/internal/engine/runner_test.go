package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// TestRunnerStopRacesStopChan asks for the ShutdownRequested channel while
// the pool stops the runner, the way a run and a shutdown meet. The channel
// must end up closed exactly once: a second close panics the worker.
func TestRunnerStopRacesStopChan(t *testing.T) {
	for range 2000 {
		r := &Runner{}
		var wg sync.WaitGroup
		var ch <-chan struct{}
		wg.Go(r.stop)
		wg.Go(func() { ch = r.stopChan() })
		wg.Wait()
		select {
		case <-ch:
		default:
			t.Fatal("ShutdownRequested channel still open after stop")
		}
		r.stop() // a second stop changes nothing
	}
}

// TestRunnerSize keeps a runner, which a pool holds once per pipeline,
// small: state that most runs never change belongs in
// rareStats or rarePlan. (256: /status's last_run, which every run sets,
// costs its run number and token.)
func TestRunnerSize(t *testing.T) {
	if size := unsafe.Sizeof(Runner{}); size > 256 {
		t.Errorf("runner is %d bytes, want at most 256", size)
	}
}

// TestRunnerRareStateOnlyWhenNeeded runs a pipeline that succeeds, then
// fails: the side struct is made by the first failure, not before, and the
// status reads the same counts through it.
func TestRunnerRareStateOnlyWhenNeeded(t *testing.T) {
	clock := &steppingClock{t: time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)}
	fail := false
	p := PipelineFunc(func(context.Context) error {
		if fail {
			return errors.New("boom")
		}
		return nil
	})
	sp := &Spec{PipelineID: "p", Schedule: mustCron("* * * * * *"), Factory: FactoryFunc(func(context.Context) (Pipeline, error) { return p, nil })}
	r := newRunner(sp, testEnv(clock, slog.New(slog.DiscardHandler)))
	r.begin(clock.t)
	for range 3 {
		clock.t = timeOf(r.next)
		if _, done, err := r.step(clock.t); done || err != nil {
			t.Fatal(done, err)
		}
	}
	if r.rare != nil || r.side != nil {
		t.Fatalf("after three successes: rare %+v, side %+v; want neither made", r.rare, r.side)
	}
	if st := r.status(); st.Runs != 3 || st.Failures != 0 || st.LastError != "" {
		t.Fatalf("status after three successes: %+v", st)
	}
	fail = true
	clock.t = timeOf(r.next)
	if _, done, err := r.step(clock.t); done || err != nil {
		t.Fatal(done, err)
	}
	st := r.status()
	if r.rare == nil || st.Runs != 4 || st.Failures != 1 || st.LastError != "boom" || st.ConsecutiveErrors != 1 {
		t.Fatalf("status after a failure: %+v (rare made: %v)", st, r.rare != nil)
	}
	fail = false
	clock.t = timeOf(r.next)
	if _, done, err := r.step(clock.t); done || err != nil {
		t.Fatal(done, err)
	}
	if st := r.status(); st.Runs != 5 || st.Failures != 1 || st.LastError != "" || st.ConsecutiveErrors != 0 {
		t.Fatalf("status after the next success: %+v", st)
	}
}
