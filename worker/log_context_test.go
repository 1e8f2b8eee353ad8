package worker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

// TestUserSlogLinesCarryTheRun: a pipeline that logs through slog's default
// logger with its run's context, as a user's code does, gets the run's
// pipeline_id and run_number on its lines; a line that names
// its pipeline itself, and a line logged without the run's context, are
// left alone.
func TestUserSlogLinesCarryTheRun(t *testing.T) {
	var stderr syncBuffer
	var lease runtime.Lease
	getWorker := func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "orders", Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					lease, _ = runtime.LeaseFromContext(ctx)
					slog.InfoContext(ctx, "user line", "rows", 3)
					slog.Default().With("pipeline_id", "named").InfoContext(ctx, "named line")
					slog.Info("no context line")
					return nil
				}), nil
			}}), nil
	}
	if code := worker.RunMain(context.Background(), []string{"-log-format", "json"}, &stderr, getWorker); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if msg, _ := m["msg"].(string); strings.HasSuffix(msg, " line") {
			lines[msg] = m
		}
	}
	user := lines["user line"]
	if user == nil {
		t.Fatalf("no user line:\n%s", stderr.String())
	}
	if user["pipeline_id"] != "orders" || user["run_number"] != float64(lease.RunNumber) || user["rows"] != float64(3) {
		t.Errorf("user line %v, want pipeline_id=orders run_number=%d rows=3", user, lease.RunNumber)
	}
	// The local coordinator's leases are unfenced (token 0): no token shown,
	// as on the worker's own lines.
	if _, ok := user["fencing_token"]; ok || lease.FencingToken != 0 {
		t.Errorf("unfenced lease (token %d): user line %v", lease.FencingToken, user)
	}
	if named := lines["named line"]; named["pipeline_id"] != "named" || named["run_number"] != nil {
		t.Errorf("a line naming its pipeline got the run's attributes: %v", named)
	}
	if plain := lines["no context line"]; plain == nil || plain["pipeline_id"] != nil {
		t.Errorf("a line without the run's context: %v", plain)
	}
}
