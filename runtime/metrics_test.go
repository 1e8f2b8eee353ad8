package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

// scrape GETs /metrics from addr and parses it as Prometheus does.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// sample finds the metric of family name whose labels include want.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
next:
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s sample with labels %v", name, want)
	return nil
}

// value returns a counter's or gauge's value.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	m := sample(t, fams, name, want)
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s %v is neither a counter nor a gauge", name, want)
	return 0
}

func TestMetricsAfterKnownRuns(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	coord := newFakeCoord()
	coord.decide = func(id string, _ int64) (bool, error) {
		switch id {
		case "held":
			return false, nil
		case "down":
			return false, errors.New("redis: connection refused")
		}
		return true, nil
	}
	release := make(chan struct{})
	slowRunning := make(chan struct{})
	cron := runtime.MustCron("* * * * *")
	pipe := func(id string, run func(ctx context.Context) error) *runtime.ScheduledPipeline {
		return &runtime.ScheduledPipeline{PipelineID: id, Schedule: cron, ErrorBackoff: time.Minute,
			Factory: func(context.Context) (runtime.Pipeline, error) { return runtime.PipelineFunc(run), nil }}
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
		runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithCoordinator(coord)}}
	d.start(t,
		pipe("ok", func(ctx context.Context) error {
			runtime.CountRecords(ctx, history.RecordCounts{In: 4, Out: 2, DeadLettered: 1, Filtered: 1})
			return nil
		}),
		pipe("bad", func(context.Context) error { return errors.New("boom") }),
		pipe("boom", func(context.Context) error { panic("kaboom") }),
		pipe("held", func(context.Context) error { return nil }),
		pipe("down", func(context.Context) error { return nil }),
		&runtime.ScheduledPipeline{PipelineID: "slow", Schedule: runtime.Once(),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					close(slowRunning)
					<-release
					return ctx.Err()
				}), nil
			}},
	)
	addr := d.pool.HealthAddr()
	waitClosed(t, slowRunning, "the slow run")
	fams := scrape(t, addr)
	if got := value(t, fams, "agora_lease_held", "pipeline", "slow"); got != 1 {
		t.Fatalf("agora_lease_held{slow} = %v during its run, want 1", got)
	}
	if got := value(t, fams, "agora_lease_held", "pipeline", "ok"); got != 0 {
		t.Fatalf("agora_lease_held{ok} = %v before any run, want 0", got)
	}
	close(release)

	// Slots 10:08 and 10:09: ok, bad and boom run twice each (a one-minute
	// backoff lands on the next slot), held and down are skipped twice.
	advanceTo(t, clock, d, t0.Add(90*time.Second)) // 10:09:00
	fams = scrape(t, addr)
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"agora_runs_total", []string{"pipeline", "ok", "status", "success"}, 2},
		{"agora_runs_total", []string{"pipeline", "ok", "status", "error"}, 0},
		{"agora_runs_total", []string{"pipeline", "bad", "status", "error"}, 2},
		{"agora_runs_total", []string{"pipeline", "boom", "status", "panic"}, 2},
		{"agora_runs_total", []string{"pipeline", "slow", "status", "success"}, 1},
		{"agora_attempts_skipped_total", []string{"pipeline", "held", "reason", "lease_held"}, 2},
		{"agora_attempts_skipped_total", []string{"pipeline", "down", "reason", "coordinator_unavailable"}, 2},
		{"agora_attempts_skipped_total", []string{"pipeline", "ok", "reason", "lease_held"}, 0},
		{"agora_consecutive_errors", []string{"pipeline", "bad"}, 2},
		{"agora_consecutive_errors", []string{"pipeline", "ok"}, 0},
		{"agora_lease_held", []string{"pipeline", "slow"}, 0},
		{"agora_records_total", []string{"pipeline", "ok", "direction", "in"}, 8},
		{"agora_records_total", []string{"pipeline", "ok", "direction", "out"}, 4},
		{"agora_records_total", []string{"pipeline", "ok", "direction", "dead_lettered"}, 2},
		{"agora_records_total", []string{"pipeline", "ok", "direction", "filtered"}, 2},
		{"agora_coordinator_up", nil, 1},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	okLease := coord.lastToken("ok")
	if got := value(t, fams, "agora_fencing_token", "pipeline", "ok"); got != float64(okLease) || okLease == 0 {
		t.Errorf("agora_fencing_token{ok} = %v, want the last token handed out for ok, %d", got, okLease)
	}
	dur := sample(t, fams, "agora_run_duration_seconds", map[string]string{"pipeline": "ok"}).GetHistogram()
	if dur.GetSampleCount() != 2 {
		t.Errorf("agora_run_duration_seconds{ok} count = %d, want 2", dur.GetSampleCount())
	}
	late := sample(t, fams, "agora_run_lateness_seconds", map[string]string{"pipeline": "ok"}).GetHistogram()
	if late.GetSampleCount() != 2 || late.GetSampleSum() != 0 {
		t.Errorf("agora_run_lateness_seconds{ok} count %d sum %v, want 2 on-time runs", late.GetSampleCount(), late.GetSampleSum())
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go collector metrics")
	}
	if _, ok := fams["process_start_time_seconds"]; !ok {
		t.Error("no process collector metrics")
	}

	// The clock jumps to 10:13:30 (a suspended machine): 10:10, 10:11 and
	// 10:12 are more than the grace behind and missed; 10:13 runs, 30 s
	// late.
	clock.Set(time.Date(2025, 3, 10, 10, 13, 30, 0, time.UTC))
	d.settle(t)
	fams = scrape(t, addr)
	if got := value(t, fams, "agora_attempts_skipped_total", "pipeline", "ok", "reason", "missed"); got != 3 {
		t.Errorf("missed slots of ok = %v, want 3", got)
	}
	if got := value(t, fams, "agora_runs_total", "pipeline", "ok", "status", "success"); got != 3 {
		t.Errorf("runs of ok = %v, want 3", got)
	}
	late = sample(t, fams, "agora_run_lateness_seconds", map[string]string{"pipeline": "ok"}).GetHistogram()
	if late.GetSampleCount() != 3 || late.GetSampleSum() != 30 {
		t.Errorf("agora_run_lateness_seconds{ok} count %d sum %v, want a third run 30 s late", late.GetSampleCount(), late.GetSampleSum())
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
