package distributed

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
)

// scrapeHTTP GETs /metrics from a pool's health server and parses it.
func scrapeHTTP(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// gathered collects g's metrics by family name.
func gathered(t *testing.T, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	list, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range list {
		out[f.GetName()] = f
	}
	return out
}

// metricWith returns the sample of family name with label key=val ("" key:
// the only sample), or nil.
func metricWith(fams map[string]*dto.MetricFamily, name, key, val string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		if key == "" {
			return m
		}
		for _, l := range m.GetLabel() {
			if l.GetName() == key && l.GetValue() == val {
				return m
			}
		}
	}
	return nil
}

func TestMetricsOfARedisCoordinatorOverHTTP(t *testing.T) {
	r := newReal(t)
	opts := r.options(5 * time.Second)
	coord, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Close() })
	ran := make(chan struct{})
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(opts.Logger),
		runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false), runtime.WithMetrics(metrics.New())).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					select {
					case <-ran:
					default:
						close(ran)
					}
					<-runtime.ShutdownRequested(ctx)
					return nil
				}), nil
			}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-pool.Started()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("no run")
	}

	fams := scrapeHTTP(t, pool.HealthAddr())
	if m := metricWith(fams, "agora_coordinator_up", "", ""); m.GetGauge().GetValue() != 1 {
		t.Fatalf("agora_coordinator_up = %v, want 1", m)
	}
	for _, op := range []string{"acquire", "heartbeat", "connect"} {
		m := metricWith(fams, "agora_redis_request_duration_seconds", "op", op)
		if m.GetHistogram().GetSampleCount() == 0 {
			t.Errorf("no %s request timed: %v", op, fams["agora_redis_request_duration_seconds"])
		}
	}
	if m := metricWith(fams, "agora_lease_held", "pipeline", "p"); m.GetGauge().GetValue() != 1 {
		t.Errorf("agora_lease_held{p} = %v during the run, want 1", m)
	}
	if m := metricWith(fams, "agora_fencing_token", "pipeline", "p"); m.GetGauge().GetValue() <= 0 {
		t.Errorf("agora_fencing_token{p} = %v, want the run's token", m)
	}

	r.srv.Kill()
	resp, err := http.Get("http://" + pool.HealthAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with Redis down: %s", resp.Status)
	}
	fams = scrapeHTTP(t, pool.HealthAddr())
	if m := metricWith(fams, "agora_coordinator_up", "", ""); m.GetGauge().GetValue() != 0 {
		t.Fatalf("agora_coordinator_up = %v with Redis down, want 0", m)
	}
	if _, dup := fams["agora_coordinator_up"]; !dup || len(fams["agora_coordinator_up"].GetMetric()) != 1 {
		t.Fatalf("agora_coordinator_up has %d samples, want one (the pool's own is left out)", len(fams["agora_coordinator_up"].GetMetric()))
	}
}

func TestMetricsRedlockNodeUp(t *testing.T) {
	rig := newQuorumRig(t, 3)
	c := rig.started(rig.options(5*time.Second), "w")
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	slot := liveSlot()
	mustAcquire(t, c, "p", slot)
	if err := c.ReleaseLease(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	fams := gathered(t, reg)
	for _, n := range rig.nodes {
		if m := metricWith(fams, "agora_redlock_node_up", "node", n.Addr()); m.GetGauge().GetValue() != 1 {
			t.Fatalf("node %s up = %v, want 1", n.Addr(), m)
		}
	}
	if m := metricWith(fams, "agora_redis_request_duration_seconds", "op", "quorum_acquire"); m.GetHistogram().GetSampleCount() == 0 {
		t.Fatalf("no quorum_acquire timed: %v", fams["agora_redis_request_duration_seconds"])
	}

	rig.nodes[2].Kill()
	mustAcquire(t, c, "p", nearSlot(slot+1)) // two of three still make a quorum
	// The dead node's answer is awaited in the background once a majority
	// granted the lease.
	waitUntil(t, 5*time.Second, "node 2 seen down", func() bool {
		fams = gathered(t, reg)
		return metricWith(fams, "agora_redlock_node_up", "node", rig.nodes[2].Addr()).GetGauge().GetValue() == 0
	})
	for i, n := range rig.nodes {
		want := 1.0
		if i == 2 {
			want = 0
		}
		if m := metricWith(fams, "agora_redlock_node_up", "node", n.Addr()); m.GetGauge().GetValue() != want {
			t.Errorf("node %d (%s) up = %v, want %v", i, n.Addr(), m, want)
		}
	}
}
