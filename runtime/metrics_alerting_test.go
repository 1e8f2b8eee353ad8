package runtime_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// TestAlertingMetrics checks the series the example alert rules stand on:
// when the last success ended, when the next attempt is due, the
// schedule's interval, the stale-write refusals and the build.
func TestAlertingMetrics(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	every := &runtime.ScheduledPipeline{PipelineID: "hourly", Schedule: runtime.Every(time.Hour),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}}
	stale := &runtime.ScheduledPipeline{PipelineID: "stale", Schedule: runtime.MustCron("*/5 * * * *"), ErrorBackoff: time.Hour,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error {
				return fmt.Errorf("sink orders: %w", runtime.ErrStaleWrite)
			}), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithHealthAddr("127.0.0.1:0")}}
	d.start(t, every, stale)
	defer func() { _ = d.stop(t) }()
	advanceTo(t, clock, d, t0.Add(3*time.Minute)) // 10:10:30: hourly ran at start, stale at 10:10
	fams := scrape(t, d.pool.HealthAddr())

	unix := func(tm time.Time) float64 { return float64(tm.UnixNano()) / 1e9 }
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"agora_last_success_timestamp_seconds", []string{"pipeline", "hourly"}, unix(t0)},
		{"agora_next_run_timestamp_seconds", []string{"pipeline", "hourly"}, unix(t0.Add(time.Hour))},
		{"agora_schedule_interval_seconds", []string{"pipeline", "hourly"}, 3600},
		{"agora_schedule_interval_seconds", []string{"pipeline", "stale"}, 300},
		{"agora_stale_writes_refused_total", []string{"pipeline", "stale"}, 1},
		{"agora_stale_writes_refused_total", []string{"pipeline", "hourly"}, 0},
		{"agora_consecutive_errors", []string{"pipeline", "stale"}, 1},
		{"agora_build_info", []string{"version", runtime.Version(), "go_version", goruntime.Version()}, 1},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// A pipeline that never succeeded has no last success: an alert on
	// time() - last_success would otherwise fire from 1970.
	for _, m := range fams["agora_last_success_timestamp_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetValue() == "stale" {
				t.Errorf("agora_last_success_timestamp_seconds{stale} = %v before any success", m.GetGauge().GetValue())
			}
		}
	}
	// Backing off after the failure: the next run is the plan /status
	// shows, a slot after 10:10.
	next := d.status(t, "stale").NextRun
	if got := value(t, fams, "agora_next_run_timestamp_seconds", "pipeline", "stale"); next == nil || got != unix(*next) || !next.After(t0.Add(150*time.Second)) {
		t.Errorf("agora_next_run_timestamp_seconds{stale} = %v, want the planned retry %v", got, next)
	}
}

// TestBucketBoundsAreShortDecimals reads the raw exposition: every le
// label of the run histograms is a short decimal, not float64 noise such
// as 0.0006000000000000001.
func TestBucketBoundsAreShortDecimals(t *testing.T) {
	clock := clocktest.NewFake(t0)
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Minute),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithHealthAddr("127.0.0.1:0")}}
	d.start(t, sp)
	defer func() { _ = d.stop(t) }()
	advanceTo(t, clock, d, t0.Add(2*time.Minute))
	resp, err := http.Get("http://" + d.pool.HealthAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	les := regexp.MustCompile(`agora_run_(?:duration|lateness)_seconds_bucket\{[^}]*le="([^"]+)"`).FindAllStringSubmatch(string(body), -1)
	if len(les) < 10 {
		t.Fatalf("only %d bucket lines in:\n%s", len(les), body)
	}
	for _, m := range les {
		if m[1] == "+Inf" {
			continue
		}
		if _, err := strconv.ParseFloat(m[1], 64); err != nil || len(m[1]) > 8 {
			t.Errorf("bucket bound le=%q: want a short decimal", m[1])
		}
	}
}
