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
)

// backfillRun is one run a backfill test's pipeline saw.
type backfillRun struct {
	slot, token int64
	worker      string
	backfill    bool
	params      map[string]string
}

// backfillPools runs n pools on r, each running "p" on cron "* * * * *"
// with run, until the test ends.
func backfillPools(t *testing.T, r *real, n int, run func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i := range n {
		opts := r.options(2 * time.Second)
		opts.Logger = quiet
		coord, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = coord.Close() })
		pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithWorkerID([]string{"a", "b", "c"}[i]),
			runtime.WithLogger(quiet), runtime.WithSignalHandling(false), runtime.WithGracefulShutdownTimeout(5*time.Second)).
			Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: backfillSchedule, MaxConsecutiveErrors: 3,
				Factory: func(context.Context) (runtime.Pipeline, error) { return runtime.PipelineFunc(run), nil }})
		wg.Go(func() { _ = pool.Run(ctx) })
		<-pool.Started()
	}
}

// TestBackfillPoolsRunEachSlotOnce: three pools run a 20-slot backfill,
// four slots at a time: each slot once, under a backfill lease with the
// request's parameters, as a slot (run number = slot time); the backfill
// ends done with every slot counted, and the history holds each slot.
func TestBackfillPoolsRunEachSlotOnce(t *testing.T) {
	r := newReal(t)
	var (
		mu   sync.Mutex
		runs []backfillRun
		busy int
		most int
	)
	backfillPools(t, r, 3, func(ctx context.Context) error {
		lease, _ := runtime.LeaseFromContext(ctx)
		mu.Lock()
		runs = append(runs, backfillRun{slot: lease.RunNumber, token: lease.FencingToken, worker: lease.WorkerID, backfill: lease.Backfill, params: runtime.ParamsFromContext(ctx)})
		busy++
		most = max(most, busy)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		busy--
		mu.Unlock()
		return nil
	})
	in, err := NewInspector(context.Background(), r.options(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	to := time.Now().Truncate(time.Minute).Add(-time.Hour)
	from := to.Add(-20 * time.Minute)
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: from, To: to, Parallel: 4, Params: map[string]string{"day": "d1"}}); err != nil {
		t.Fatal(err)
	}
	p := waitBackfill(t, in, "p", 20*time.Second)
	if p.State != BackfillDone || p.Done != 20 || p.Failed != 0 || p.Skipped != 0 {
		t.Fatalf("backfill = %+v", p)
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[int64]bool{}
	workers := map[string]bool{}
	for _, x := range runs {
		if x.slot < from.Unix() || x.slot >= to.Unix() {
			continue // a scheduled slot
		}
		if seen[x.slot] || !x.backfill || x.params["day"] != "d1" || x.slot%60 != 0 {
			t.Fatalf("backfill run %+v (seen before: %v)", x, seen[x.slot])
		}
		seen[x.slot] = true
		workers[x.worker] = true
	}
	if len(seen) != 20 || most > 4 {
		t.Fatalf("%d slots ran, %d at most at once; want 20, at most 4", len(seen), most)
	}
	t.Logf("20 slots on %d replicas, at most %d at once", len(workers), most)
	for s := from; s.Before(to); s = s.Add(time.Minute) {
		if ok, err := in.c.SlotCompleted(context.Background(), "p", s.Unix()); !ok || err != nil {
			t.Fatalf("slot %s not in the history after its backfill: %v", s, err)
		}
	}
	hist, err := in.Runs(context.Background(), RunQuery{PipelineIDs: []string{"p"}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, run := range hist {
		if run.RunNumber >= from.Unix() && run.RunNumber < to.Unix() {
			n++
			if !run.Backfill || run.Triggered || run.Params["day"] != "d1" {
				t.Fatalf("a backfill slot's run in the history: %+v", run)
			}
		}
	}
	if n != 20 {
		t.Fatalf("%d backfill runs in the history, want 20", n)
	}
}

// waitBackfill waits, real time, for pipelineID's backfill to end.
func waitBackfill(t *testing.T, in *Inspector, pipelineID string, within time.Duration) BackfillProgress {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p, err := in.Backfill(context.Background(), pipelineID)
		if err != nil {
			t.Fatal(err)
		}
		if p.State != BackfillRunning {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("backfill still running after %s: %+v", within, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBackfillPoolsSkipCompletedSlotsAndStopAfterFailures: a second
// backfill of the same range skips every slot (the history says they
// completed) without running one; a pipeline whose slots fail stops the
// backfill after MaxConsecutiveErrors failed slots in a row.
func TestBackfillPoolsSkipCompletedSlotsAndStopAfterFailures(t *testing.T) {
	r := newReal(t)
	var (
		mu   sync.Mutex
		ran  int
		fail = true
	)
	to := time.Now().Truncate(time.Minute).Add(-time.Hour)
	from := to.Add(-5 * time.Minute)
	backfillPools(t, r, 2, func(ctx context.Context) error {
		lease, _ := runtime.LeaseFromContext(ctx)
		if !lease.Backfill {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		ran++
		if fail {
			return errors.New("source down")
		}
		return nil
	})
	in, err := NewInspector(context.Background(), r.options(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: from, To: to}); err != nil {
		t.Fatal(err)
	}
	p := waitBackfill(t, in, "p", 20*time.Second)
	if p.State != BackfillFailed || p.Failed != 3 || len(p.Errors) != 3 || p.Errors[0].Error != "source down" {
		t.Fatalf("a failing backfill: %+v", p)
	}
	mu.Lock()
	fail, ran = false, 0
	mu.Unlock()
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: from, To: to}); err != nil {
		t.Fatal(err)
	}
	if p := waitBackfill(t, in, "p", 20*time.Second); p.State != BackfillDone || p.Done != 5 {
		t.Fatalf("the backfill again after the source came back: %+v", p)
	}
	mu.Lock()
	ran = 0
	mu.Unlock()
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "p", From: from, To: to}); err != nil {
		t.Fatal(err)
	}
	if p := waitBackfill(t, in, "p", 20*time.Second); p.State != BackfillDone || p.Skipped != 5 || p.Done != 0 {
		t.Fatalf("a backfill of completed slots: %+v", p)
	}
	mu.Lock()
	defer mu.Unlock()
	if ran != 0 {
		t.Fatalf("%d runs of completed slots; a backfill without --reprocess skips them", ran)
	}
}

// TestBackfillDownstreamRunsTheDependentsSlotsAfterTheUpstreams: two pools
// run extract and load (after=extract); a backfill of extract with
// Downstream also backfills load over the same range, and each of load's
// slots starts only after extract's run of that slot completed.
func TestBackfillDownstreamRunsTheDependentsSlotsAfterTheUpstreams(t *testing.T) {
	r := newReal(t)
	var (
		mu        sync.Mutex
		extracted = map[int64]bool{}
		loaded    = map[int64]int{}
		early     []int64
		hold      = make(chan struct{}) // extract's runs of slots before holdBefore wait on it
	)
	holdBefore := time.Now().Truncate(time.Minute).Add(-time.Hour - 10*time.Minute).Unix()
	run := func(name string) runtime.Factory {
		return func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				lease, _ := runtime.LeaseFromContext(ctx)
				if !lease.Backfill {
					return nil
				}
				if name == "extract" {
					if lease.RunNumber < holdBefore {
						<-hold
					}
					time.Sleep(30 * time.Millisecond) // load must wait for this
					mu.Lock()
					extracted[lease.RunNumber] = true
					mu.Unlock()
					return nil
				}
				mu.Lock()
				defer mu.Unlock()
				loaded[lease.RunNumber]++
				if !extracted[lease.RunNumber] {
					early = append(early, lease.RunNumber)
				}
				return nil
			}), nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, w := range []string{"a", "b"} {
		opts := r.options(2 * time.Second)
		opts.Logger = quiet
		coord, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = coord.Close() })
		pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithWorkerID(w), runtime.WithLogger(quiet), runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "extract", Schedule: backfillSchedule, Factory: run("extract")}).
			Register(&runtime.ScheduledPipeline{PipelineID: "load", Schedule: backfillSchedule, Factory: run("load"), After: []string{"extract"}})
		wg.Go(func() { _ = pool.Run(ctx) })
		<-pool.Started()
	}
	// Registered after the pools, so it runs before their shutdown, which
	// would otherwise wait out its graceful timeout for the held runs.
	t.Cleanup(func() { close(hold) })
	in, err := NewInspector(context.Background(), r.options(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	to := time.Now().Truncate(time.Minute).Add(-time.Hour)
	from := to.Add(-10 * time.Minute)
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "load", From: from, To: to, Downstream: true}); !errors.Is(err, ErrInvalidBackfill) {
		t.Fatalf("--downstream of a pipeline nothing waits for: %v", err)
	}
	p, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "extract", From: from, To: to, Parallel: 3, Downstream: true})
	if err != nil || len(p.Request.Dependents) != 1 || p.Request.Dependents[0] != "load" {
		t.Fatalf("start: %+v, %v", p, err)
	}
	if lp, err := in.Backfill(context.Background(), "load"); err != nil || !lp.Request.WaitUpstream || lp.Total != 10 {
		t.Fatalf("load's backfill: %+v, %v", lp, err)
	}
	if p := waitBackfill(t, in, "extract", 20*time.Second); p.State != BackfillDone || p.Done != 10 {
		t.Fatalf("extract's backfill: %+v", p)
	}
	if p := waitBackfill(t, in, "load", 20*time.Second); p.State != BackfillDone || p.Done != 10 {
		t.Fatalf("load's backfill: %+v", p)
	}
	// A cancel of the upstream's backfill ends its dependents' too; their
	// slots waiting for upstream slots that do not come give themselves
	// back. extract's earlier slots hold until the test ends, so load's
	// wait.
	if _, err := in.StartBackfill(context.Background(), BackfillRequest{PipelineID: "extract", From: from.Add(-10 * time.Minute), To: from, Parallel: 2, Downstream: true}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		lp, _ := in.Backfill(context.Background(), "load")
		if len(lp.InFlight) > 0 {
			break // load's first slot waits for extract's
		}
		if time.Now().After(deadline) {
			t.Fatalf("load claimed no slot to wait with: %+v", lp)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err := in.CancelBackfill(context.Background(), "extract", WithReason("wrong range"))
	if err != nil || !strings.Contains(res.Message, "and the backfills of its dependents load") {
		t.Fatalf("cancel: %+v, %v", res, err)
	}
	if lp, _ := in.Backfill(context.Background(), "load"); lp.State != BackfillCanceled {
		t.Fatalf("load's backfill after extract's cancel: %+v", lp)
	}
	// Its slots that waited for extract give themselves back, uncounted,
	// once the workers see the cancel (a poll, then a wait's next ask).
	deadline = time.Now().Add(10 * time.Second)
	for {
		lp, _ := in.Backfill(context.Background(), "load")
		if len(lp.InFlight) == 0 && lp.Done == 0 && lp.Failed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("load's cancelled backfill still holds slots: %+v", lp)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) > 0 {
		t.Fatalf("load ran slots %v before extract completed them", early)
	}
	for s := from; s.Before(to); s = s.Add(time.Minute) {
		if loaded[s.Unix()] != 1 {
			t.Fatalf("load ran slot %s %d times, want once", s, loaded[s.Unix()])
		}
	}
}
