package etl_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
)

// sinkMetric reads a sample of agora_sink_* from what a pool given
// SinkCollector serves at /metrics; -1 when it is absent.
func sinkMetric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.New(metrics.WithCollectors(etl.SinkCollector())).Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if len(got) != len(labels) {
				continue
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			return counterValue(m)
		}
	}
	return -1
}

func counterValue(m *dto.Metric) float64 { return m.GetCounter().GetValue() }

// TestSinkMetricsAreLabelledWithTheSinksNames: each sink of a pool run
// counts the records it wrote and rejected, and its failed writes, under
// its name; an unnamed one without a Name of its own under sinks[i]; runs outside a pool count
// nothing.
func TestSinkMetricsAreLabelledWithTheSinksNames(t *testing.T) {
	const id = "sink-metrics-test"
	records := func() []etl.Record {
		return []etl.Record{{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}, {"id": 5}}
	}
	ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: id})
	all := &memSink{name: "warehouse", ev: &events{}}
	even := &memSink{ev: &events{}, reject: rejectOdd}
	dlq := &memSink{name: "dlq", ev: &events{}}
	p := etl.New(etl.NewIterableSource(records()), []etl.Sink{all, even}, etl.WithDLQ(dlq), etl.WithBatchSize(2))
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sink, outcome string
		want          float64
	}{
		{"warehouse", "written", 5}, {"warehouse", "rejected", 0},
		{"sinks[1]", "written", 2}, {"sinks[1]", "rejected", 3},
	} {
		if got := sinkMetric(t, "agora_sink_records_total", map[string]string{"pipeline": id, "sink": c.sink, "outcome": c.outcome}); got != c.want {
			t.Errorf("agora_sink_records_total{sink=%q,outcome=%q} = %v, want %v", c.sink, c.outcome, got, c.want)
		}
	}
	if got := sinkMetric(t, "agora_sink_errors_total", map[string]string{"pipeline": id, "sink": "warehouse"}); got != 0 {
		t.Errorf("errors of warehouse = %v, want 0", got)
	}
	if got := sinkMetric(t, "agora_sink_records_total", map[string]string{"pipeline": id, "sink": "dlq", "outcome": "written"}); got != -1 {
		t.Errorf("the dead-letter queue is counted as a sink: %v", got)
	}

	// A failed write and a failed flush each count once.
	down := &memSink{name: "warehouse", ev: &events{}, fail: errors.New("connection refused")}
	if err := etl.New(etl.NewIterableSource(records()), []etl.Sink{down}).Run(ctx); err == nil || !strings.Contains(err.Error(), "warehouse") {
		t.Fatalf("run: %v", err)
	}
	full := &memSink{name: "warehouse", ev: &events{}, failFlush: errors.New("disk full")}
	if err := etl.New(etl.NewIterableSource(records()), []etl.Sink{full}).Run(ctx); err == nil {
		t.Fatal("want the flush error")
	}
	if got := sinkMetric(t, "agora_sink_errors_total", map[string]string{"pipeline": id, "sink": "warehouse"}); got != 2 {
		t.Errorf("errors of warehouse = %v, want 2", got)
	}
	if got := sinkMetric(t, "agora_sink_records_total", map[string]string{"pipeline": id, "sink": "warehouse", "outcome": "written"}); got != 10 {
		t.Errorf("written by warehouse = %v, want 10 (5, then none, then 5 before the flush failed)", got)
	}

	// Outside a pool run: nothing.
	if err := etl.New(etl.NewIterableSource(records()), []etl.Sink{&memSink{name: "elsewhere", ev: &events{}}}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sinkMetric(t, "agora_sink_records_total", map[string]string{"pipeline": "", "sink": "elsewhere", "outcome": "written"}); got != -1 {
		t.Errorf("a run outside a pool was counted: %v", got)
	}
}
