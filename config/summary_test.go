package config

import (
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/postgres"
	"github.com/agora-etl/agora/etl/sqlite"
)

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

func TestSummaryQuotesControlCharacters(t *testing.T) {
	doc := "format = \"agora/v1\"\n[worker]\nworker_id = \"w1\\npipeline forged: every 1s\"\n" +
		"[pipelines.p]\nsource = { type = \"iterable\", records = [{id = 1}] }\nsinks = [{ type = \"stdout\" }]\nschedule = { mode = \"once\" }\n"
	f, err := Parse("q.toml", []byte(doc), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	out := f.Summary()
	if strings.Contains(out, "\npipeline forged") || !strings.Contains(out, `worker_id "w1\npipeline forged: every 1s"`) {
		t.Errorf("summary:\n%s", out)
	}
}

// TestSummaryListsEachSinkWithItsNameAndTable: a sink is shown by name and
// type, a SQL sink with its table, mode and key, before its redacted URL.
func TestSummaryListsEachSinkWithItsNameAndTable(t *testing.T) {
	r := etl.Builtins()
	postgres.Register(r)
	sqlite.Register(r)
	doc := `format = "agora/v1"
[pipelines.p]
source = { type = "iterable", records = [{id = 1}] }
schedule = { mode = "once" }
dlq = { type = "stdout" }

[[pipelines.p.sinks]]
name = "warehouse"
type = "postgres"
url = "postgres://app:s3cret@db:5432/shop"
table = "analytics.orders"
mode = "upsert"
key = ["id", "region"]

[[pipelines.p.sinks]]
type = "sqlite"
path = "local.db"
table = "orders"

[[pipelines.p.sinks]]
name = "console"
type = "stdout"
`
	f, err := Parse("s.toml", []byte(doc), WithLookupEnv(noEnv), WithRegistry(r))
	if err != nil {
		t.Fatal(err)
	}
	want := `  sink:   warehouse: postgres (table=analytics.orders, mode=upsert, key=id,region, url=postgres://app:xxxxx@db:5432/shop)
  sink:   sqlite (table=orders, mode=insert, path=local.db)
  sink:   console: stdout
  dlq:    stdout
`
	if got := f.Summary(); !strings.Contains(got, want) {
		t.Errorf("Summary() =\n%s\nwant it to hold\n%s", got, want)
	}
}

// TestSummaryListsTheTransformsInOrder: what happens between source and
// sinks is shown too, in the order it runs.
func TestSummaryListsTheTransformsInOrder(t *testing.T) {
	var out testOutputs
	doc := `format = "agora/v1"
[pipelines.orders]
source = { type = "iterable", records = [{ amount = 2 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
[[pipelines.orders.transforms]]
type = "filter"
expr = "record.amount > 0"
[[pipelines.orders.transforms]]
type = "rename"
fields = { amount = "total" }
`
	f, err := Parse("c.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := "  source: iterable\n  then:   filter(record.amount > 0)\n  then:   rename(amount→total)\n  sink:   stdout\n"
	if got := f.Summary(); !strings.Contains(got, want) {
		t.Errorf("summary lacks\n%s\nin\n%s", want, got)
	}
}
