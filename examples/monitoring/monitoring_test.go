package monitoring

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/metrics"
)

// exported scrapes a worker on a real redis-server, with a Redlock quorum
// and a record pipeline, and returns the metric names it serves (histograms
// by their _bucket series too).
func exported(t *testing.T) map[string]bool {
	t.Helper()
	names, _ := scrape(t)
	return names
}

// scrape returns what exported does, and the label values of each metric
// family served (family, label name, value).
func scrape(t *testing.T) (names map[string]bool, labels map[string]map[string]map[string]bool) {
	t.Helper()
	primary := redistest.Start(t)
	var quorum []string
	for range 3 {
		quorum = append(quorum, redistest.Start(t).URL())
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: primary.URL(), RedlockRedisURLs: quorum,
		LeaseTTL: 5 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Close() })
	done := make(chan struct{})
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(quiet),
		runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false), runtime.WithMetrics(metrics.New())).
		// An every pipeline that moves records: runs, duration, lateness,
		// records; its deadline serves agora_deadlines_missed_total.
		Register(&runtime.ScheduledPipeline{PipelineID: "records", Schedule: runtime.Every(time.Hour), Deadline: time.Hour,
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					runtime.CountRecords(ctx, history.RecordCounts{In: 2, Out: 1, DeadLettered: 1})
					return nil
				}), nil
			}}).
		// A run that holds its lease while the metrics are read.
		Register(&runtime.ScheduledPipeline{PipelineID: "holder", Schedule: runtime.Once(),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					close(done)
					<-runtime.ShutdownRequested(ctx)
					return nil
				}), nil
			}})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = pool.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
	<-pool.Started()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no run")
	}
	deadline := time.Now().Add(5 * time.Second)
	for pool.Status().Pipelines[0].Runs == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := http.Get("http://" + pool.HealthAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	names = map[string]bool{}
	labels = map[string]map[string]map[string]bool{}
	for name, f := range fams {
		names[name] = true
		if f.GetType().String() == "HISTOGRAM" {
			names[name+"_bucket"] = true
		}
		labels[name] = map[string]map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[name][l.GetName()] == nil {
					labels[name][l.GetName()] = map[string]bool{}
				}
				labels[name][l.GetName()][l.GetValue()] = true
			}
		}
	}
	return names, labels
}

func TestDashboardQueriesOnlyExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	names := exported(t)
	metric := regexp.MustCompile(`agora_[a-z_]+`)
	seen := 0
	for _, panel := range dash.Panels {
		for _, target := range panel.Targets {
			for _, m := range metric.FindAllString(target.Expr, -1) {
				seen++
				if !names[m] {
					t.Errorf("panel %q queries %s, which a worker does not export", panel.Title, m)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d metric references found in the dashboard", seen)
	}
	for _, want := range []string{"agora_runs_total", "agora_redlock_node_up", "agora_redis_request_duration_seconds", "agora_coordinator_up", "go_goroutines"} {
		if !names[want] {
			t.Errorf("a worker does not export %s", want)
		}
	}
}

func TestScrapeConfigPointsAtTheHealthPorts(t *testing.T) {
	raw, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, want := range []string{"metrics_path: /metrics", `"127.0.0.1:8081"`, "job_name: agora"} {
		if !strings.Contains(text, want) {
			t.Errorf("prometheus.yml lacks %q", want)
		}
	}
	if strings.Contains(text, "\t") {
		t.Error("prometheus.yml has a tab: YAML forbids them for indentation")
	}
}
