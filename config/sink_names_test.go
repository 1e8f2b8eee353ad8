package config

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
)

// TestSinkNamesLabelTheSinkMetrics: the per-sink metrics of a pipeline
// built from a file carry each sink's name key, or else the name its dead
// letters carry too (the file sink's file(path)).
func TestSinkNamesLabelTheSinkMetrics(t *testing.T) {
	dir := t.TempDir()
	doc := fmt.Sprintf(`format = "agora/v1"
[pipelines.named-sink-metrics]
source = { type = "iterable", records = [{id = 1}, {id = 2}, {id = 3}] }
schedule = { mode = "once" }

[[pipelines.named-sink-metrics.sinks]]
name = "warehouse"
type = "file"
path = %q

[[pipelines.named-sink-metrics.sinks]]
type = "file"
path = %q
`, filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"))
	f, err := Parse(filepath.Join(dir, "p.toml"), []byte(doc), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "named-sink-metrics"})
	pl, err := f.Pipelines[0].Factory()(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// The file's own pool serves the sinks' metrics: config gives it etl's
	// collectors.
	pool, err := f.Pool()
	if err != nil {
		t.Fatal(err)
	}
	families, err := pool.Metrics().(*metrics.Metrics).Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]float64{}
	for _, fam := range families {
		if fam.GetName() != "agora_sink_records_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["pipeline"] == "named-sink-metrics" && l["outcome"] == "written" {
				written[l["sink"]] = m.GetCounter().GetValue()
			}
		}
	}
	if len(written) != 2 || written["warehouse"] != 3 || written["file("+filepath.Join(dir, "b.jsonl")+")"] != 3 {
		t.Fatalf("agora_sink_records_total{outcome=written} by sink: %v", written)
	}
}
