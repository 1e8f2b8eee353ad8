package distributed

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// foreignInspector is an Inspector on r's server that logs to logs.
func (r *real) foreignInspector(logs *logBuffer) *Inspector {
	r.t.Helper()
	in, err := NewInspector(context.Background(), Options{RedisURL: r.srv.URL(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = in.Close() })
	return in
}

// TestForeignWorkerKeyIsSkippedWithOneWarning is the repro of a string SET
// at a worker key: every Inspector read the fleet commands make still
// answers, and the key is named once.
func TestForeignWorkerKeyIsSkippedWithOneWarning(t *testing.T) {
	r := newReal(t)
	startCoordinator(t, r.options(time.Minute), "w1", []string{"p"})
	admin := r.client(0)
	const stringKey = "agora:distributed:worker:stringkey"
	if err := admin.Set(ctx, stringKey, "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// A hash that is not a worker record either.
	if err := admin.HSet(ctx, "agora:distributed:worker:odd", "colour", "blue").Err(); err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	in := r.foreignInspector(logs)
	for range 2 {
		ws, err := in.Workers(ctx)
		if err != nil || len(ws) != 1 || ws[0].ID != "w1" {
			t.Fatalf("Workers = %+v, %v", ws, err)
		}
		if _, err := in.Pipelines(ctx); err != nil {
			t.Fatalf("Pipelines: %v", err)
		}
		if _, err := in.Leases(ctx); err != nil {
			t.Fatalf("Leases: %v", err)
		}
		if _, err := in.Pause(ctx, "p", "test"); err != nil {
			t.Fatalf("Pause: %v", err)
		}
	}
	for _, key := range []string{stringKey, "agora:distributed:worker:odd"} {
		if n := logs.count("key=" + key + " "); n != 1 {
			t.Errorf("%d warnings naming %s, want one:\n%s", n, key, logs)
		}
	}
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("not a WARN:\n%s", logs)
	}
}

// TestForeignPauseKey is the repro of a string at the pause key: reading
// the pause flags answers none (with a warning), the workers drop the
// flags they had, and pause and resume fail clearly naming the key.
func TestForeignPauseKey(t *testing.T) {
	r := newReal(t)
	opts := r.options(time.Minute)
	worker := startCoordinator(t, opts, "w1", []string{"p"})
	logs := &logBuffer{}
	in := r.foreignInspector(logs)
	if _, err := in.Pause(ctx, "p", "test"); err != nil {
		t.Fatal(err)
	}
	if err := worker.pollControl(ctx); err != nil || !worker.Paused("p") {
		t.Fatalf("before: paused %v, poll %v", worker.Paused("p"), err)
	}
	pausedKey := worker.keys.paused()
	if err := r.client(0).Set(ctx, pausedKey, "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := worker.pollControl(ctx); err != nil {
		t.Fatalf("a worker's poll failed on the foreign pause key: %v", err)
	}
	if worker.Paused("p") {
		t.Error("the worker kept a pause flag Redis no longer holds")
	}
	if !strings.Contains(r.logs.String(), "key="+pausedKey) {
		t.Errorf("the worker did not name the key:\n%s", r.logs)
	}
	ps, err := in.Pipelines(ctx)
	if err != nil || len(ps) != 1 || ps[0].Paused {
		t.Fatalf("Pipelines = %+v, %v", ps, err)
	}
	_, err = in.Pause(ctx, "p", "test")
	if !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), pausedKey) || !strings.Contains(err.Error(), "DEL "+pausedKey) {
		t.Fatalf("Pause = %v, want ErrForeignData naming %s", err, pausedKey)
	}
	if _, err := in.Resume(ctx, "p"); !errors.Is(err, ErrForeignData) {
		t.Fatalf("Resume = %v, want ErrForeignData", err)
	}
	if v, _ := r.client(0).Get(ctx, pausedKey).Result(); v != "hello" {
		t.Errorf("the foreign key was changed to %q", v)
	}
	if st := worker.Status().(CoordinatorStatus); !st.Reachable {
		t.Error("a foreign key made Redis count as unreachable")
	}
}

// TestOversizedTokenIsThePipelinesProblem is the repro of a token key
// holding "99999999999999999999999 5": the acquire script refuses the
// pipeline without writing (no wrapped negative token, no lease), the
// coordinator reports it in Healthy (/readyz), Status (/status) and a
// metric, the Inspector's lease shows it, and once the key is deleted the
// pipeline runs again.
func TestOversizedTokenIsThePipelinesProblem(t *testing.T) {
	r := newReal(t)
	c := startCoordinator(t, r.options(time.Minute), "w1", []string{"p", "q"})
	admin := r.client(0)
	tokenKey := c.keys.token("p")
	const bad = "99999999999999999999999 5"
	if err := admin.Set(ctx, tokenKey, bad, 0).Err(); err != nil {
		t.Fatal(err)
	}
	slot := liveSlot()
	for range 3 {
		ok, err := c.TryAcquireLease(ctx, "p", slot)
		if ok || !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), tokenKey) {
			t.Fatalf("TryAcquireLease = %v, %v; want ErrForeignData naming %s", ok, err, tokenKey)
		}
	}
	if v, _ := admin.Get(ctx, tokenKey).Result(); v != bad {
		t.Fatalf("the token key now holds %q", v)
	}
	if n, _ := admin.Exists(ctx, c.keys.lease("p")).Result(); n != 0 {
		t.Fatal("a lease was written")
	}
	// Another pipeline is unaffected.
	mustAcquire(t, c, "q", slot)

	err := c.Healthy(ctx)
	if !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), `pipeline "p"`) {
		t.Fatalf("Healthy = %v, want the pipeline's problem", err)
	}
	st := c.Status().(CoordinatorStatus)
	if !strings.Contains(st.PipelineProblems["p"], tokenKey) || !st.Reachable {
		t.Fatalf("Status: problems %v, reachable %v", st.PipelineProblems, st.Reachable)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := false
	for _, f := range fams {
		if f.GetName() != "agora_coordinator_foreign_data_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			counted = len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == "p" && m.GetCounter().GetValue() == 3
		}
	}
	if !counted {
		t.Errorf("agora_coordinator_foreign_data_total{pipeline=\"p\"} is not 3: %v", fams)
	}
	if r.logs.count("key="+tokenKey) != 1 {
		t.Errorf("want one warning naming the token key:\n%s", r.logs)
	}

	in := r.foreignInspector(&logBuffer{})
	leases, err := in.Leases(ctx, "p")
	if err != nil || len(leases) != 1 || !strings.Contains(leases[0].Problem, tokenKey) {
		t.Fatalf("Inspector lease = %+v, %v", leases, err)
	}
	ps, err := in.Pipelines(ctx)
	if err != nil || ps[0].PipelineID != "p" || ps[0].Lease.Problem == "" || ps[1].Lease.Problem != "" {
		t.Fatalf("Pipelines = %+v, %v", ps, err)
	}

	// Fixed by the operator: the pipeline is granted again and healthy.
	if err := admin.Del(ctx, tokenKey).Err(); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, c, "p", slot)
	if err := c.Healthy(ctx); err != nil {
		t.Fatalf("Healthy after the fix: %v", err)
	}
	if tok, _ := admin.Get(ctx, tokenKey).Result(); strings.HasPrefix(tok, "-") {
		t.Fatalf("a negative token was stored: %q", tok)
	}
}

// TestMalformedLeaseValueIsThePipelinesProblem: a lease key holding a
// value that does not parse, or a key of another type, is refused the same
// way instead of failing the script.
func TestMalformedLeaseValueIsThePipelinesProblem(t *testing.T) {
	r := newReal(t)
	c := startCoordinator(t, r.options(time.Minute), "w1", []string{"p"})
	admin := r.client(0)
	for name, set := range map[string]func() error{
		"garbage in the list": func() error { return admin.RPush(ctx, c.keys.lease("p"), "not a lease").Err() },
		"negative token":      func() error { return admin.RPush(ctx, c.keys.lease("p"), "-9223372036854775808 5 w#ab").Err() },
		"a string":            func() error { return admin.Set(ctx, c.keys.lease("p"), "hello", 0).Err() },
		"token of a hash":     func() error { return admin.HSet(ctx, c.keys.token("p"), "a", "b").Err() },
	} {
		t.Run(name, func(t *testing.T) {
			if err := admin.Del(ctx, c.keys.lease("p"), c.keys.token("p")).Err(); err != nil {
				t.Fatal(err)
			}
			if err := set(); err != nil {
				t.Fatal(err)
			}
			ok, err := c.TryAcquireLease(ctx, "p", liveSlot())
			if ok || !errors.Is(err, ErrForeignData) {
				t.Fatalf("TryAcquireLease = %v, %v; want ErrForeignData", ok, err)
			}
		})
	}
}

// TestHistoryMembersThatAreNotRunsAreSkippedAndCounted: a member {"a":1}
// in a pipeline's history is not shown as a run with an empty id.
func TestHistoryMembersThatAreNotRunsAreSkippedAndCounted(t *testing.T) {
	r := newReal(t)
	c := startCoordinator(t, r.options(time.Minute), "w1", []string{"p"})
	lease := mustAcquire(t, c, "p", liveSlot())
	end := time.Now()
	if err := c.FinishRun(ctx, history.Record{PipelineID: "p", RunNumber: lease.RunNumber, FencingToken: lease.FencingToken,
		WorkerID: "w1", Start: end.Add(-time.Second), End: end, Duration: time.Second, Outcome: history.OutcomeSucceeded}); err != nil {
		t.Fatal(err)
	}
	admin := r.client(0)
	waitUntil(t, 5*time.Second, "the run in the history", func() bool {
		runs, _ := c.RunHistory(ctx, "p", 10)
		return len(runs) == 1
	})
	for _, m := range []string{`{"a":1}`, "not json"} {
		if err := admin.ZAdd(ctx, c.keys.done("p"), redis.Z{Score: float64(end.UnixMilli()), Member: m}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := c.RunHistory(ctx, "p", 10)
	if err != nil || len(runs) != 1 || runs[0].PipelineID != "p" {
		t.Fatalf("RunHistory = %+v, %v", runs, err)
	}
	if n := c.Status().(CoordinatorStatus).HistorySkipped; n != 2 {
		t.Errorf("history_skipped = %d, want 2", n)
	}
	if r.logs.count("key="+c.keys.done("p")) != 1 {
		t.Errorf("want one warning naming the history key:\n%s", r.logs)
	}
}

// TestOversizedTokenShowsInReadyzAndStatus runs a pool on the coordinator:
// with the repro's token key, /readyz answers 503 naming the pipeline and
// its key, and /status carries the problem.
func TestOversizedTokenShowsInReadyzAndStatus(t *testing.T) {
	r := newReal(t)
	if err := r.client(0).Set(ctx, "agora:distributed:token:{p}", "99999999999999999999999 5", 0).Err(); err != nil {
		t.Fatal(err)
	}
	coord, err := NewRedisWorkerCoordinator(r.options(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Close() })
	quiet := slog.New(slog.NewTextHandler(&logBuffer{}, nil))
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(quiet),
		runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error { <-runtime.ShutdownRequested(ctx); return nil }), nil
		}})
	runCtx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = pool.Run(runCtx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
	<-pool.Started()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + pool.HealthAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitUntil(t, 10*time.Second, "the acquire refused", func() bool { return len(coord.pipelineProblems()) == 1 })
	code, body := get("/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `pipeline "p"`) || !strings.Contains(body, "agora:distributed:token:{p}") {
		t.Errorf("/readyz = %d %q", code, body)
	}
	if code, body = get("/status"); code != 200 || !strings.Contains(body, `"pipeline_problems"`) {
		t.Errorf("/status = %d %s", code, body)
	}
}
