package config

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

func noEnv(string) (string, bool) { return "", false }

func TestExampleFileLoads(t *testing.T) {
	var out testOutputs
	f, err := Load("testdata/example.toml", WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := f.PipelineIDs(); len(got) != 1 || got[0] != "orders" {
		t.Fatalf("PipelineIDs() = %v, want [orders]", got)
	}
	if !f.Worker.HasHealthPort || f.Worker.HealthPort != 8080 {
		t.Errorf("worker = %+v, want health_port 8080", f.Worker)
	}
	p := f.Pipeline("orders")
	if p.Schedule.Mode != "every" || p.Schedule.Every != 15*time.Minute {
		t.Errorf("schedule = %+v, want every 15m", p.Schedule)
	}
	if p.Source.Type != "iterable" || len(p.Sinks) != 1 || p.Sinks[0].Type != "stdout" || p.DLQ != nil {
		t.Errorf("components: source %q, sinks %v, dlq %v", p.Source.Type, p.Sinks, p.DLQ)
	}
	if p.BatchSize != DefaultBatchSize || p.ErrorBackoff != runtime.DefaultErrorBackoff || p.MaxConsecutiveErrors != 0 || p.MaxDeadLetters != -1 {
		t.Errorf("defaults: batch %d, backoff %s, max errors %d, max dead %d", p.BatchSize, p.ErrorBackoff, p.MaxConsecutiveErrors, p.MaxDeadLetters)
	}
	want := Tracing{Enabled: true, Backend: "opentelemetry", ServiceName: "orders-worker"}
	if p.Tracing != want {
		t.Errorf("tracing = %+v, want %+v", p.Tracing, want)
	}

	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	pool, err := f.Pool(runtime.WithHealthAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatalf("Pool: %v", err)
	}
	st := pool.Status()
	if len(st.Pipelines) != 1 || st.Pipelines[0].PipelineID != "orders" || st.Pipelines[0].Schedule != runtime.Every(15*time.Minute).String() {
		t.Fatalf("pool pipelines = %+v, want orders every 15m", st.Pipelines)
	}

	// One run, as the pool does it: {"id":1} on the stdout sink.
	sp := f.ScheduledPipelines()[0]
	if sp.Schedule.Kind() != runtime.ScheduleEvery || sp.Schedule.Interval() != 15*time.Minute {
		t.Errorf("schedule = %s", sp.Schedule)
	}
	pl, err := sp.Factory(context.Background())
	if err != nil {
		t.Fatalf("Factory: %v", err)
	}
	ctx, counts := runtime.ContextWithRecordCounts(context.Background())
	if err := pl.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := out.stdout.String(); got != "{\"id\":1}\n" {
		t.Errorf("stdout = %q, want {\"id\":1}", got)
	}
	if c := counts(); c.In != 1 || c.Out != 1 || c.DeadLettered != 0 {
		t.Errorf("counts = %+v", c)
	}
}

func TestPoolRunsTheExample(t *testing.T) {
	var out testOutputs
	f, err := Load("testdata/example.toml", WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	pool, err := f.Pool(runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for pool.Status().Pipelines[0].Runs == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	st := pool.Status().Pipelines[0]
	if st.Runs != 1 || st.Failures != 0 || st.Records.In != 1 || st.Records.Out != 1 {
		t.Errorf("status = %+v, want one successful run of one record", st)
	}
	if got := out.stdout.String(); got != "{\"id\":1}\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/nope.toml")
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) != 1 || !strings.HasPrefix(ds.Error(), "testdata/nope.toml: cannot read the file: ") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseSettings(t *testing.T) {
	var out testOutputs
	env := map[string]string{"STREAM": "orders", "PASS": "s3cret", "OTEL_SERVICE_NAME": "from-env"}
	doc := `format = "agora/v1"
[worker]
health_port = 0
graceful_shutdown_timeout = "45s"
worker_id = "w-${STREAM}"

[pipelines.a]
batch_size = 10
error_backoff = 5
max_consecutive_errors = 3
max_dead_letters = 7
source = { type = "iterable", records = [{n = 1}, {n = 2, bad = true}, {n = 3}] }
sinks = [{ type = "reject", field = "bad" }]
dlq = { type = "redis_stream", url = "redis://:${PASS}@127.0.0.1:6379/0", stream = "${STREAM}-dlq" }
schedule = { mode = "cron", expr = "*/5 * * * *", catch_up = "latest", grace = "2m" }
tracing = { enabled = true, exporter = "stdout" }

[pipelines."b.2"]
source.type = "iterable"
[[pipelines."b.2".sinks]]
type = "stdout"
[pipelines."b.2".schedule]
mode = "every"
hours = 1
minutes = 1.5
seconds = 30

[pipelines.c]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule.mode = "once"
error_backoff = 0.25

[pipelines.d]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "continuous" }
`
	f, err := Parse("p.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if w := f.Worker; !w.HasHealthPort || w.HealthPort != 0 || w.GracefulShutdownTimeout != 45*time.Second || w.WorkerID != "w-orders" {
		t.Errorf("worker = %+v", w)
	}
	if got := strings.Join(f.PipelineIDs(), ","); got != "a,b.2,c,d" {
		t.Errorf("ids in file order = %s", got)
	}
	a := f.Pipeline("a")
	if a.BatchSize != 10 || a.ErrorBackoff != 5*time.Second || a.MaxConsecutiveErrors != 3 || a.MaxDeadLetters != 7 {
		t.Errorf("a = %+v", a)
	}
	if s := a.Schedule; s.Mode != "cron" || s.Expr != "*/5 * * * *" || s.CatchUp != "latest" || s.Grace == nil || *s.Grace != 2*time.Minute || s.Runtime().Kind() != runtime.ScheduleCron {
		t.Errorf("a schedule = %+v", s)
	}
	if a.Tracing != (Tracing{Enabled: true, Backend: "opentelemetry", Exporter: "stdout"}) {
		t.Errorf("a tracing = %+v", a.Tracing)
	}
	if cfg := a.DLQ.Config.(*streamConfig); cfg.URL != "redis://:s3cret@127.0.0.1:6379/0" || cfg.Stream != "orders-dlq" {
		t.Errorf("dlq config = %+v", cfg)
	}
	if got := f.Pipeline("b.2").Schedule.Every; got != time.Hour+90*time.Second+30*time.Second {
		t.Errorf("b.2 every = %s, want 1h2m", got)
	}
	if c := f.Pipeline("c"); c.Schedule.Runtime().Kind() != runtime.ScheduleOnce || c.ErrorBackoff != 250*time.Millisecond {
		t.Errorf("c = %+v", c)
	}
	if d := f.Pipeline("d"); d.Schedule.Runtime().Kind() != runtime.ScheduleContinuous {
		t.Errorf("d schedule = %s", d.Schedule)
	}

	// The summary names what runs and never the password.
	sum := f.Summary()
	for _, want := range []string{
		"p.toml: agora/v1, 4 pipelines",
		"worker: health_port 0, graceful_shutdown_timeout 45s, worker_id w-orders",
		`pipeline a: cron "*/5 * * * *", catch_up latest, grace 2m`,
		"  dlq:    redis_stream (url=redis://:xxxxx@127.0.0.1:6379/0)",
		"  batch_size 10, error_backoff 5s, max_consecutive_errors 3, max_dead_letters 7",
		"  tracing: opentelemetry, service from-env, exporter stdout",
		"pipeline b.2: every 1h2m",
		"pipeline d: continuous",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "s3cret") || f.String() != sum {
		t.Errorf("summary leaks the password or differs from String:\n%s", sum)
	}

	// A run of a: the rejected record goes to the DLQ, the others through.
	pl, err := a.Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, counts := runtime.ContextWithRecordCounts(context.Background())
	if err := pl.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(out.accepted) != 2 || len(out.stream) != 1 || !strings.Contains(fmt.Sprint(out.stream[0]["error"]), "refused") {
		t.Errorf("accepted %v, dead letters %v", out.accepted, out.stream)
	}
	if c := counts(); c != (history.RecordCounts{In: 3, Out: 2, DeadLettered: 1}) {
		t.Errorf("counts = %+v", c)
	}
}
