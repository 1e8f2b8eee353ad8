package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
)

const streamCopyConfig = `format = "agora/v1"

[pipelines.copy]
batch_size = 10

[pipelines.copy.source]
type = "redis_stream"
url = "${REDIS_URL}"
stream = "in"
group = "copiers"
consumer = "copier-1"
block = "200ms"

[pipelines.copy.schedule]
mode = "continuous"

[[pipelines.copy.sinks]]
type = "file"
path = "${OUT}"
`

// TestStreamToFileSurvivesSIGKILL kills a worker copying a Redis stream to
// a file while it is mid-stream, restarts it, and checks that every entry
// lands in the file at least once and ends acknowledged.
func TestStreamToFileSurvivesSIGKILL(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer client.Close()
	ctx := context.Background()
	const entries = 5000
	pipe := client.Pipeline()
	for i := range entries {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: "in", Values: map[string]any{"data": fmt.Sprintf(`{"n":%d}`, i)}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	path := writeConfig(t, dir, "copy.toml", streamCopyConfig)
	env := []string{"AGORA_DISTRIBUTED_REDIS_URL=", "REDIS_URL=" + srv.URL(), "OUT=" + out}

	first := startAgora(t, dir, env, "worker", "--config", path)
	deadline := time.Now().Add(60 * time.Second)
	for countLines(t, out) < 200 {
		if time.Now().After(deadline) {
			t.Fatalf("the worker copied nothing within 60 s\n%s", first.stderr)
		}
		time.Sleep(2 * time.Millisecond)
	}
	first.signal(t, syscall.SIGKILL)
	first.wait(t, 10*time.Second)
	atKill := countLines(t, out)
	if atKill >= entries {
		t.Fatalf("the worker copied all %d entries before it was killed; the test needs it mid-stream", entries)
	}

	second := startAgora(t, dir, env, "worker", "--config", path)
	deadline = time.Now().Add(90 * time.Second)
	for {
		seen := distinctNumbers(t, out)
		if len(seen) == entries {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart only %d of %d entries landed\n%s", len(seen), entries, second.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	second.signal(t, syscall.SIGINT)
	if code := second.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("restarted worker exit %d\n%s", code, second.stderr)
	}
	pending, err := client.XPending(ctx, "in", "copiers").Result()
	if err != nil {
		t.Fatal(err)
	}
	if pending.Count != 0 {
		t.Fatalf("%d entries still pending after every one landed", pending.Count)
	}
	t.Logf("killed after %d lines; %d lines in the end for %d entries (at-least-once)", atKill, countLines(t, out), entries)
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// distinctNumbers returns the n fields of the file's lines; every complete
// line must be a record, since the sink drops a line a crash cut short
// before it appends again.
func distinctNumbers(t *testing.T, path string) map[int]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	text := string(data)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i] // the worker may be writing the last line now
	} else {
		text = ""
	}
	for _, l := range lines(text) {
		var rec struct{ N int }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %q of %s is not a record: %v", l, path, err)
		}
		seen[rec.N] = true
	}
	return seen
}
