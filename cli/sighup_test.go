package cli_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
)

// TestSIGHUPStopsAWorkerGracefully: a closed terminal sends SIGHUP; the
// worker finishes the run in flight, releases its lease, logs why it
// stopped and exits 0, as for SIGTERM.
func TestSIGHUPStopsAWorkerGracefully(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", `format = "agora/v1"

[pipelines.events.source]
type = "redis_stream"
url = "`+srv.URL()+`"
stream = "events"
group = "g"
block = "100ms"

[pipelines.events.schedule]
mode = "continuous"

[[pipelines.events.sinks]]
type = "stdout"
`)
	env := []string{"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL(), "AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s"}
	p := startAgora(t, dir, env, "worker", "--config", path, "-log-format", "json", "-log-level", "debug")
	p.waitOutput(t, p.stderr, `"run started"`, 20*time.Second)
	lease := "agora:distributed:lease:{events}"
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	if n, err := rdb.Exists(context.Background(), lease).Result(); err != nil || n != 1 {
		t.Fatalf("the lease is not held while the stream runs (%d, %v)\n%s", n, err, p.stderr)
	}
	p.signal(t, syscall.SIGHUP)
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code after SIGHUP = %d, want 0\nstderr:\n%s", code, p.stderr)
	}
	for _, want := range []string{"received hangup", "worker pool stopped"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, p.stderr)
		}
	}
	if n, err := rdb.Exists(context.Background(), lease).Result(); err != nil || n != 0 {
		t.Errorf("the lease is still held after SIGHUP (%d, %v)", n, err)
	}
}
