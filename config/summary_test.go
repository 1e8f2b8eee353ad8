package config

import "testing"

func TestSummaryOfTheExample(t *testing.T) {
	var out testOutputs
	f := loadExample(t, &out)
	want := `testdata/example.toml: agora/v1, 1 pipeline
worker: health_port 8080, graceful_shutdown_timeout 30s (default), worker_id unique per process
pipeline orders: every 15m
  source: iterable
  sink:   stdout
  batch_size 500, error_backoff 1m, max_consecutive_errors 0, max_dead_letters unlimited
  tracing: opentelemetry, service orders-worker, exporter otlp when OTEL_EXPORTER_OTLP_*ENDPOINT is set, else none
`
	if got := f.Summary(); got != want {
		t.Errorf("Summary() =\n%s\nwant\n%s", got, want)
	}
}
