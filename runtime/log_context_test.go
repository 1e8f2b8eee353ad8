package runtime_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// TestUserSlogLinesCarryTheFencingToken checks the handler alone with a
// fenced lease in the context.
func TestUserSlogLinesCarryTheFencingToken(t *testing.T) {
	var out syncBuffer
	logger := slog.New(runtime.RunAttrsHandler(slog.NewTextHandler(&out, nil)))
	ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "orders", RunNumber: 1773136800, FencingToken: 42})
	logger.InfoContext(ctx, "user line")
	if want := `msg="user line" pipeline_id=orders run_number=1773136800 fencing_token=42`; !strings.Contains(out.String(), want) {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

// TestUserSlogLinesNameTheTokenOnce: a line that logs its fencing token or
// run number itself, as the README's tour does, shows each once.
func TestUserSlogLinesNameTheTokenOnce(t *testing.T) {
	var out syncBuffer
	logger := slog.New(runtime.RunAttrsHandler(slog.NewTextHandler(&out, nil)))
	ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "orders", RunNumber: 1773136800, FencingToken: 42})
	lease, _ := runtime.LeaseFromContext(ctx)
	logger.InfoContext(ctx, "direct", "fencing_token", lease.FencingToken)
	logger.With("run_number", lease.RunNumber).InfoContext(ctx, "with")
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.Count(l, "fencing_token=") != 1 || strings.Count(l, "run_number=") != 1 || strings.Count(l, "pipeline_id=orders") != 1 {
			t.Errorf("each run attribute once, got %q", l)
		}
	}
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Fatalf("%d lines:\n%s", n, out.String())
	}
}
