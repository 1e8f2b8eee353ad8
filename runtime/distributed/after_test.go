package distributed

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

// TestAfterAcrossTwoPools runs extract in one pool and load, which depends
// on it, in another, each with its own coordinator on one real
// redis-server and one shared fake clock: load's slot starts only once
// extract completed the same slot, however long extract takes; with
// extract paused fleet-wide, load skips the slot at the next one, with
// the reason.
func TestAfterAcrossTwoPools(t *testing.T) {
	r := newReal(t)
	at := func(m, s int) time.Time { return time.Date(2026, 3, 1, 10, m, s, 0, time.UTC) }
	clock := clocktest.NewFake(at(0, 30))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var (
		mu        sync.Mutex
		extracted = map[int64]bool{}
		loads     []int64
		early     []int64
	)
	release := make(chan struct{})
	extract := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			select { // a slow extract: load waits for it
			case <-release:
			case <-ctx.Done(): // the test failed early: its cleanup stops the pools
				return ctx.Err()
			}
			lease, _ := runtime.LeaseFromContext(ctx)
			mu.Lock()
			extracted[lease.RunNumber] = true
			mu.Unlock()
			return nil
		}), nil
	}
	load := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			lease, _ := runtime.LeaseFromContext(ctx)
			mu.Lock()
			defer mu.Unlock()
			loads = append(loads, lease.RunNumber)
			if !extracted[lease.RunNumber] {
				early = append(early, lease.RunNumber)
			}
			return nil
		}), nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	minute := runtime.MustCron("* * * * *")
	var pools []*runtime.WorkerPool
	for i, sp := range []*runtime.ScheduledPipeline{
		{PipelineID: "extract", Schedule: minute, Factory: extract},
		{PipelineID: "load", Schedule: minute, Factory: load, After: []string{"extract"}},
	} {
		// A lease long enough for the fake clock's steps: renewals are
		// timed by it.
		opts := r.options(5 * time.Minute)
		opts.Logger, opts.Clock = quiet, clock
		coord, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		coord.ctl.every = 20 * time.Millisecond
		pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithClock(clock),
			runtime.WithWorkerID("binary-"+string(rune('a'+i))), runtime.WithLogger(quiet), runtime.WithSignalHandling(false)).Register(sp)
		done := make(chan error, 1)
		wg.Go(func() { done <- pool.Run(ctx); _ = coord.Close() })
		select {
		case <-pool.Started():
		case err := <-done:
			t.Fatalf("pool of %s: %v", sp.PipelineID, err)
		}
		pools = append(pools, pool)
	}
	loadStatus := func() runtime.PipelineStatus { return pools[1].Status().Pipelines[0] }
	slot := at(1, 0).Unix()

	clock.Set(at(1, 0))
	waitUntil(t, 5*time.Second, "load to wait for the 10:01 slot", func() bool {
		st := loadStatus()
		return st.AwaitingUpstream != nil && st.AwaitingUpstream.Unix() == slot
	})
	for s := 1; s <= 30; s += 3 { // load asks again and again meanwhile
		clock.Set(at(1, s))
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	started := len(loads)
	mu.Unlock()
	if started != 0 {
		t.Fatalf("load started %d runs while extract was still running its slot", started)
	}
	close(release)
	waitUntil(t, 5*time.Second, "extract to complete 10:01", func() bool {
		st := pools[0].Status().Pipelines[0]
		return st.Runs == 1 && st.RunningSince == nil
	})
	clock.Set(at(1, 35))
	waitUntil(t, 5*time.Second, "load to run 10:01", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(loads) == 1
	})

	admin, err := NewRedisWorkerCoordinator(r.options(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.Pause(ctx, "extract", "test"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "extract's pool to see the pause", func() bool { return pools[0].Status().Pipelines[0].Paused })
	clock.Set(at(2, 0))
	waitUntil(t, 5*time.Second, "load to wait for the 10:02 slot", func() bool {
		st := loadStatus()
		return st.AwaitingUpstream != nil && st.AwaitingUpstream.Equal(at(2, 0))
	})
	clock.Set(at(2, 30))
	time.Sleep(20 * time.Millisecond)
	clock.Set(at(3, 0))
	reason := `upstream "extract" has not completed slot 2026-03-01T10:02:00Z`
	waitUntil(t, 5*time.Second, "load to skip 10:02", func() bool { return loadStatus().SkippedUpstream == 1 })
	if st := loadStatus(); st.LastSkipReason != reason {
		t.Fatalf("last skip reason %q, want %q", st.LastSkipReason, reason)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(early) != 0 || len(loads) != 1 || loads[0] != slot {
		t.Fatalf("load ran %v (before extract completed them: %v); want 10:01 only, after extract", loads, early)
	}
}

// TestSlotCompletedRunHistory: a slot before the last completed one counts
// only by a run of it the history holds; with the history off, only the
// last completed slot is known.
func TestSlotCompletedRunHistory(t *testing.T) {
	r := newReal(t)
	for _, off := range []bool{false, true} {
		opts := r.options(5 * time.Second)
		opts.KeyPrefix = "off:" + map[bool]string{false: "no:", true: "yes:"}[off]
		opts.RunHistory = history.Policy{Off: off}
		c := startCoordinator(t, opts, "a", []string{"p"})
		first := liveSlot()
		for i, outcome := range []history.Outcome{history.OutcomeSucceeded, history.OutcomeSucceeded} {
			s := first + int64(i)
			if i > 0 {
				nearSlot(s)
			}
			mustAcquire(t, c, "p", s)
			if err := c.FinishRun(context.Background(), history.Record{PipelineID: "p", End: time.Now(), Outcome: outcome}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.SlotCompleted(context.Background(), "p", first)
		if err != nil {
			t.Fatal(err)
		}
		if got != !off {
			t.Errorf("history off=%v: SlotCompleted(earlier slot) = %v, want %v", off, got, !off)
		}
		if ok, err := c.SlotCompleted(context.Background(), "p", first+1); err != nil || !ok {
			t.Errorf("history off=%v: the last completed slot: %v, %v", off, ok, err)
		}
	}
}

// TestSlotCompletedForeignData: a completed key of another type gives an
// error naming it, and is left as it was.
func TestSlotCompletedForeignData(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(5*time.Second), "a")
	k := keysFor(c.s)
	rc := r.client(0)
	if err := rc.Set(ctx, k.done("x"), "hand-made", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ok, err := c.SlotCompleted(context.Background(), "x", 1_796_263_200)
	if ok || !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), k.done("x")) {
		t.Fatalf("SlotCompleted = %v, %v; want ErrForeignData naming %s", ok, err, k.done("x"))
	}
	if v := rc.Get(ctx, k.done("x")).Val(); v != "hand-made" {
		t.Fatalf("the foreign value was replaced: %q", v)
	}
}
