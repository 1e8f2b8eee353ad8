package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/notify"
)

type recordingNotifier struct {
	mu     sync.Mutex
	events []notify.Event
}

func (n *recordingNotifier) Notify(ev notify.Event) {
	n.mu.Lock()
	n.events = append(n.events, ev)
	n.mu.Unlock()
}

func (n *recordingNotifier) kinds() []notify.Kind {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]notify.Kind, len(n.events))
	for i, ev := range n.events {
		out[i] = ev.Kind
	}
	return out
}

func TestPoolNotifiesStaleWritesFailuresAndTheStop(t *testing.T) {
	clock := clocktest.NewFake(t0)
	rec := &recordingNotifier{}
	n := 0
	sp := &runtime.ScheduledPipeline{PipelineID: "orders", Schedule: runtime.Every(time.Minute),
		ErrorBackoff: time.Second, MaxConsecutiveErrors: 2,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error {
				n++
				if n == 1 {
					return fmt.Errorf("sink: %w", runtime.ErrStaleWrite)
				}
				return errors.New("dial postgres://app:hunter2@db/x: refused")
			}), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
		runtime.WithNotifier(rec), runtime.WithWorkerID("w1")}}
	d.start(t, sp)
	advanceTo(t, clock, d, t0.Add(10*time.Second))
	if err := d.result(t); !errors.Is(err, runtime.ErrTooManyErrors) {
		t.Fatalf("Run = %v, want the stop after two failures", err)
	}
	want := []notify.Kind{notify.StaleWriteRefused, notify.RunFailed, notify.RunFailed, notify.PipelineStopped}
	got := rec.kinds()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	stale, last := rec.events[0], rec.events[3]
	if stale.PipelineID != "orders" || stale.WorkerID != "w1" || stale.RunNumber == 0 || stale.ConsecutiveErrors != 1 {
		t.Errorf("stale-write event %+v", stale)
	}
	if rec.events[2].ConsecutiveErrors != 2 || last.ConsecutiveErrors != 2 {
		t.Errorf("second failure %+v, stop %+v: want 2 consecutive errors", rec.events[2], last)
	}
	for _, ev := range rec.events {
		if ev.Time.IsZero() || strings.Contains(ev.Error, "hunter2") {
			t.Errorf("event %+v: want a time and no password", ev)
		}
	}
}

// TestWebhookMetricsInThePoolsRegistry gives the pool a real webhook whose
// server refuses every event and reads the failure in the registry
// /metrics serves.
func TestWebhookMetricsInThePoolsRegistry(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	wh, err := notify.New(notify.Options{URL: srv.URL, Attempts: 2, Backoff: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	clock := clocktest.NewFake(t0)
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), MaxConsecutiveErrors: 1,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return errors.New("boom") }), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
		runtime.WithNotifier(wh),
		runtime.WithShutdownHook(wh.Close)}}
	d.start(t, sp)
	deadline := time.Now().Add(5 * time.Second)
	for wh.Stats().Failed == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_ = d.result(t) // the stop ends the pool; its registry stays readable
	list, err := d.metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range list {
		if m := f.GetMetric(); len(m) == 1 && m[0].Counter != nil {
			got[f.GetName()] = m[0].Counter.GetValue()
		}
	}
	if got["agora_notify_failures_total"] != 1 || got["agora_notify_dropped_total"] != 0 || got["agora_notify_sent_total"] != 0 {
		t.Errorf("notify metrics %v, want the stop event counted as failed", got)
	}
}
