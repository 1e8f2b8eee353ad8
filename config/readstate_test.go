package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// TestFileReadOnceAcrossTwoReplicas: two workers built from one config
// file, coordinating through one real redis-server, read a file once
// between them; the marks live in the coordinator's Redis.
func TestFileReadOnceAcrossTwoReplicas(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "in"), 0o755)
	writeTestFile(t, filepath.Join(dir, "in", "a.jsonl"), "{\"n\":1}\n{\"n\":2}\n")
	conf := filepath.Join(dir, "pipelines.toml")
	writeTestFile(t, conf, `format = "agora/v1"
[pipelines.ingest]
source = { type = "file", path = "in/*.jsonl" }
sinks = [{ type = "file", path = "out-${REPLICA}.jsonl" }]
schedule = { mode = "every", hours = 1 }
`)
	run := func(replica string, token int64) string {
		f, err := Load(conf, WithLookupEnv(func(k string) (string, bool) { return replica, k == "REPLICA" }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Pool(); err != nil {
			t.Fatal(err)
		}
		ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "ingest", FencingToken: token})
		pl, err := f.Pipelines[0].Factory()(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := pl.Run(ctx); err != nil {
			t.Fatal(err)
		}
		out, _ := os.ReadFile(filepath.Join(dir, "out-"+replica+".jsonl"))
		return string(out)
	}
	if got := run("a", 1); got != "{\"n\":1}\n{\"n\":2}\n" {
		t.Fatalf("replica a wrote %q", got)
	}
	if got := run("b", 2); got != "" {
		t.Fatalf("replica b read the file again: %q", got)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	keys, err := c.Keys(context.Background(), "agora:distributed:files:*").Result()
	if err != nil || len(keys) != 2 || !strings.Contains(strings.Join(keys, " "), "ingest "+filepath.Join(dir, "in", "*.jsonl")) {
		t.Fatalf("read state keys in the coordinator's Redis: %v, %v", keys, err)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
