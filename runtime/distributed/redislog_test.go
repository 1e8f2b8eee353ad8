package distributed

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestRedisClientLoggerLogsAtDebugOnly(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })

	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	redisClientLogger{}.Printf(context.Background(), "failed to dial after %d attempts: %s", 2, "connection refused")
	if buf.Len() != 0 {
		t.Fatalf("logged at INFO level: %q", buf.String())
	}

	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	redisClientLogger{}.Printf(context.Background(), "failed to dial after %d attempts: %s", 2, "connection refused")
	got := buf.String()
	if !strings.Contains(got, "level=DEBUG") || !strings.Contains(got, "failed to dial after 2 attempts: connection refused") {
		t.Fatalf("debug line = %q, want the formatted go-redis message at DEBUG", got)
	}
}

// TestRedisClientLogLinesAreRedacted builds a coordinator on a URL with a
// password and logs a go-redis line quoting it: the line reaches slog
// without it, whatever coordinator the go-redis client belonged to.
func TestRedisClientLogLinesAreRedacted(t *testing.T) {
	const secret = "cl13ntL0gSecret"
	c, err := NewRedisWorkerCoordinator(Options{RedisURL: "unix://u:" + secret + "@/tmp/agora-test-none.sock"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var buf bytes.Buffer
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	redisClientLogger{}.Printf(context.Background(), "redis: dial unix u:%s@/tmp/agora-test-none.sock: %s", secret, "no such file")
	if got := buf.String(); strings.Contains(got, secret) || !strings.Contains(got, "xxxxx") {
		t.Fatalf("go-redis line = %q; want the password replaced", got)
	}
}

// TestClosedCoordinatorsLeaveTheClientLogSecrets keeps the set of secrets
// go-redis lines are scrubbed of to the coordinators still open.
func TestClosedCoordinatorsLeaveTheClientLogSecrets(t *testing.T) {
	count := func() int {
		clientLogSecrets.mu.RLock()
		defer clientLogSecrets.mu.RUnlock()
		return len(clientLogSecrets.list)
	}
	before := count()
	c, err := NewRedisWorkerCoordinator(Options{RedisURL: "redis://u:closingSecret@127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if count() != before+1 {
		t.Fatalf("secrets registered: %d, want %d", count(), before+1)
	}
	_ = c.Close()
	if count() != before {
		t.Fatalf("secrets after Close: %d, want %d", count(), before)
	}
}
