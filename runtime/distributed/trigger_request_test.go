package distributed

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

func TestTriggerEncoding(t *testing.T) {
	if v := encodeTrigger(1764635400123, nil); v != "1764635400123" {
		t.Fatalf("a request without parameters is %q; want the Unix ms alone, as releases before parameters wrote it", v)
	}
	params := map[string]string{"day": "2026-01-01", "q": `a "b"`}
	v := encodeTrigger(1764635400123, params)
	if v != `{"at":1764635400123,"params":{"day":"2026-01-01","q":"a \"b\""}}` {
		t.Fatalf("encoded %s", v)
	}
	req, _, ok := decodeTrigger(v)
	if !ok || req.At.UnixMilli() != 1764635400123 || !maps.Equal(req.Params, params) {
		t.Fatalf("decode(%s) = %+v, %v", v, req, ok)
	}
	if req, _, ok := decodeTrigger("1764635400123"); !ok || req.At.UnixMilli() != 1764635400123 || req.Params != nil {
		t.Fatalf("plain decode = %+v, %v", req, ok)
	}
	for _, bad := range []string{"", "soon", "-5", "12345678901234567", "{", "[1]", `{"params":{"a":"b"}}`, `{"at":5,"params":{"a-b":"1"}}`,
		`{"at":5,"params":{"a":1}}`, `{"at":"5"}`} {
		if req, why, ok := decodeTrigger(bad); ok || why == "" {
			t.Errorf("decode(%q) = %+v, %q, %v; want refused with a reason", bad, req, why, ok)
		}
	}
}

func TestTriggerWithParamsRunsWithThemOnceAndRecordsThem(t *testing.T) {
	f := newTestFleet(t, 3, runtime.MustCron("0 0 1 1 *"), 0)
	params := map[string]string{"day": "2026-01-01"}
	if err := f.admin.Trigger(ctx, "p", WithParams(params)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "the triggered run", func() bool { return len(f.seen()) >= 1 })
	time.Sleep(100 * time.Millisecond) // several polls of the other replicas
	runs := f.seen()
	if len(runs) != 1 || !maps.Equal(runs[0].params, params) {
		t.Fatalf("runs %+v, want one with %v", runs, params)
	}
	var hist []history.Record
	waitUntil(t, 5*time.Second, "the run's record", func() bool {
		hist, _ = f.admin.RunHistory(ctx, "p", 0)
		return len(hist) == 1
	})
	if !hist[0].Triggered || !maps.Equal(hist[0].Params, params) {
		t.Fatalf("history %+v, want the triggered run with %v", hist[0], params)
	}

	// A plain trigger afterwards runs without parameters.
	if err := f.admin.Trigger(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "the second run", func() bool { return len(f.seen()) >= 2 })
	if got := f.seen()[1].params; got != nil {
		t.Fatalf("plain trigger ran with %v", got)
	}
}

func TestPendingTriggerWithOtherParamsRefusesTheNext(t *testing.T) {
	r := newReal(t)
	c, err := NewRedisWorkerCoordinator(r.options(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	a := map[string]string{"day": "2026-01-01"}
	if err := c.Trigger(ctx, "p", WithParams(a)); err != nil {
		t.Fatal(err)
	}
	if err := c.Trigger(ctx, "p", WithParams(maps.Clone(a))); err != nil {
		t.Fatalf("the same parameters again coalesce: %v", err)
	}
	for _, other := range []map[string]string{nil, {"day": "2026-01-02"}} {
		err := c.Trigger(ctx, "p", WithParams(other))
		if !errors.Is(err, ErrTriggerPending) || !strings.Contains(err.Error(), "day=2026-01-01") {
			t.Fatalf("trigger with %v while %v is pending: %v, want ErrTriggerPending naming the pending one", other, a, err)
		}
	}
	pending, err := c.PendingTriggerRequests(ctx)
	if err != nil || len(pending) != 1 || !maps.Equal(pending["p"].Params, a) {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	if err := c.Trigger(ctx, "p", WithParams(map[string]string{"bad-name": "x"})); !errors.Is(err, ErrInvalidControl) || !strings.Contains(err.Error(), `"bad-name"`) {
		t.Fatalf("bad name: %v", err)
	}
	if err := c.Trigger(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.client(0).HGet(ctx, "agora:distributed:control:trigger", "q").Result(); strings.TrimLeft(v, "0123456789") != "" {
		t.Fatalf("a trigger without parameters wrote %q; want Unix ms alone", v)
	}
}

func TestForeignTriggerValueIsNamedAndNeverRun(t *testing.T) {
	f := newTestFleet(t, 1, runtime.MustCron("0 0 1 1 *"), 0)
	key := "agora:distributed:control:trigger"
	if err := f.r.client(0).HSet(ctx, key, "p", "someone else's").Err(); err != nil {
		t.Fatal(err)
	}
	err := f.admin.Trigger(ctx, "p", WithParams(map[string]string{"day": "x"}))
	if !errors.Is(err, ErrForeignData) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), `"p"`) {
		t.Fatalf("trigger over a foreign value: %v, want ErrForeignData naming %s", err, key)
	}
	if pending, err := f.admin.PendingTriggerRequests(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("pending = %+v, %v; want the foreign value skipped", pending, err)
	}
	time.Sleep(100 * time.Millisecond) // five polls
	if runs := f.seen(); len(runs) != 0 {
		t.Fatalf("a foreign value was run: %+v", runs)
	}
	if v, _ := f.r.client(0).HGet(ctx, key, "p").Result(); v != "someone else's" {
		t.Fatalf("the foreign value became %q; agora must leave it alone", v)
	}
	if !strings.Contains(f.r.logs.String(), key) {
		t.Errorf("no WARN named %s:\n%s", key, f.r.logs.String())
	}
}

func TestInspectorTriggerAuditsItsParams(t *testing.T) {
	r := newReal(t)
	_, in := r.inspected([]string{"w1"}, []string{"a"}, nil)
	params := map[string]string{"day": "2026-01-01"}
	res, err := in.Trigger(ctx, "a", WithParams(params), WithActor("ops@host"))
	if err != nil || !strings.Contains(res.Message, "with parameters day=2026-01-01") {
		t.Fatalf("Trigger = %+v, %v", res, err)
	}
	log, err := in.Audit(ctx, AuditQuery{PipelineIDs: []string{"a"}})
	if err != nil || len(log) != 1 || log[0].Action != AuditTrigger || !maps.Equal(log[0].Params, params) {
		t.Fatalf("audit = %+v, %v; want the trigger with its params", log, err)
	}
	if _, err := in.Trigger(ctx, "a", WithParams(map[string]string{"day": "2026-01-02"})); !errors.Is(err, ErrTriggerPending) {
		t.Fatalf("a second trigger with other params: %v, want ErrTriggerPending", err)
	}
	if log, _ := in.Audit(ctx, AuditQuery{PipelineIDs: []string{"a"}}); len(log) != 1 {
		t.Fatalf("a refused trigger was audited: %+v", log)
	}
}

// TestTriggerPendingAtStartIsRunOnceTheWorkerRuns: a request made before
// any replica started is claimed by the first poll after the pool runs,
// not by Start (when the pool would have dropped it).
func TestTriggerPendingAtStartIsRunOnceTheWorkerRuns(t *testing.T) {
	r := newReal(t)
	admin, err := NewRedisWorkerCoordinator(r.options(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.Trigger(ctx, "p", WithParams(map[string]string{"day": "2026-01-01"})); err != nil {
		t.Fatal(err)
	}
	coord, err := NewRedisWorkerCoordinator(r.options(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	coord.ctl.every = 20 * time.Millisecond
	t.Cleanup(func() { _ = coord.Close() })
	got := make(chan map[string]string, 2)
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 0 1 1 *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					got <- runtime.ParamsFromContext(ctx)
					return nil
				}), nil
			}})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- pool.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case p := <-got:
		if p["day"] != "2026-01-01" {
			t.Fatalf("the run's params %v", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the trigger pending at start never ran\n%s", r.logs.String())
	}
}
