package config

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora-etl/agora/runtime"
)

func loadExample(t *testing.T, out *testOutputs) *File {
	t.Helper()
	f, err := Load("testdata/example.toml", WithRegistry(testRegistry(out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPoolReportsBadDistributedSettings(t *testing.T) {
	var out testOutputs
	f := loadExample(t, &out)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "redis://127.0.0.1:1/0")
	t.Setenv("AGORA_DISTRIBUTED_LEASE_TTL_SECONDS", "soon")
	_, err := f.Pool()
	if err == nil || !strings.Contains(err.Error(), "AGORA_DISTRIBUTED_LEASE_TTL_SECONDS") {
		t.Fatalf("Pool() error = %v, want one naming AGORA_DISTRIBUTED_LEASE_TTL_SECONDS", err)
	}
}

func TestPoolSharesLeasesThroughRedis(t *testing.T) {
	mr := miniredis.RunT(t)
	var out testOutputs
	f := loadExample(t, &out)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "redis://"+mr.Addr()+"/0")
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
	// The run took a fenced lease from Redis: the fencing counter exists.
	var tokenKeys []string
	for _, k := range mr.Keys() {
		if strings.Contains(k, "token:") && strings.Contains(k, "orders") {
			tokenKeys = append(tokenKeys, k)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st := pool.Status().Pipelines[0]; st.Runs != 1 || st.Failures != 0 {
		t.Fatalf("status = %+v, want one successful run", st)
	}
	if len(tokenKeys) == 0 {
		t.Errorf("no fencing token key for orders in Redis: %v", mr.Keys())
	}
}

func TestPoolWorkerSettingsAndOverrides(t *testing.T) {
	var out testOutputs
	doc := `format = "agora/v1"
[worker]
worker_id = "from-file"
graceful_shutdown_timeout = 3
[pipelines.p]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
max_consecutive_errors = 2
error_backoff = "7s"
`
	f, err := Parse("w.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	pool, err := f.Pool()
	if err != nil {
		t.Fatal(err)
	}
	if pool.WorkerID() != "from-file" {
		t.Errorf("WorkerID = %q, want from-file", pool.WorkerID())
	}
	pool, err = f.Pool(runtime.WithWorkerID("from-code"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if pool.WorkerID() != "from-code" {
		t.Errorf("WorkerID = %q, want the option to win", pool.WorkerID())
	}
	sp := f.ScheduledPipelines()[0]
	if sp.PipelineID != "p" || sp.MaxConsecutiveErrors != 2 || sp.ErrorBackoff != 7*time.Second || sp.Schedule.Kind() != runtime.ScheduleOnce {
		t.Errorf("scheduled pipeline = %+v", sp)
	}
}

func TestFactoryErrorsAreRedacted(t *testing.T) {
	var out testOutputs
	doc := `format = "agora/v1"
[pipelines.p]
source = { type = "file", path = "in-redis://:hunter2@h", format = "jsonl" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`
	f, err := Parse("r.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Pipelines[0].Factory()(context.Background())
	if err == nil || !strings.Contains(err.Error(), `pipeline "p": source`) || !strings.Contains(err.Error(), "in-redis://:xxxxx@h") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Factory error = %v", err)
	}
	if strings.Contains(f.Summary(), "hunter2") {
		t.Errorf("summary leaks the password:\n%s", f.Summary())
	}
}

func TestScheduledPipelinesCarryTheCatchUpPolicy(t *testing.T) {
	var out testOutputs
	doc := `format = "agora/v1"
[pipelines.latest]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *", catch_up = "latest" }
[pipelines.all]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *", catch_up = "all" }
[pipelines.skip]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *", catch_up = "skip", grace = "5m" }
[pipelines.default]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }
`
	f, err := Parse("c.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		policy runtime.CatchUpPolicy
		grace  time.Duration
	}{
		"latest":  {runtime.CatchUpLatest, 0},
		"all":     {runtime.CatchUpAll, 0},
		"skip":    {runtime.CatchUpSkip, 5 * time.Minute},
		"default": {runtime.CatchUpSkip, 0},
	}
	for _, sp := range f.ScheduledPipelines() {
		w := want[sp.PipelineID]
		if sp.CatchUp != w.policy || sp.Grace != w.grace {
			t.Errorf("%s: catch-up %s, grace %s; want %s, %s", sp.PipelineID, sp.CatchUp, sp.Grace, w.policy, w.grace)
		}
	}
}
