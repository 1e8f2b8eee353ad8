package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// shape describes a decoded JSON value's structure: object keys (sorted,
// with their values' shapes) and value kinds, not the values.
func shape(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + shape(v[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return "[" + shape(v[0]) + "]"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func shapeOf(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	return shape(v)
}

// TestFleetJSONIsTheInspectorsJSON: every "fleet ... --json" prints the
// Inspector's result, in its shape, field for field.
func TestFleetJSONIsTheInspectorsJSON(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 2, &runs, &mu)
	ctx := context.Background()
	in, err := distributed.OpenInspector(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	// Wait for events' lease, then give orders a run in the history.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ls, err := in.Leases(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		if ls[0].Held || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := in.Trigger(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	for {
		rs, err := in.Runs(ctx, distributed.RunQuery{PipelineIDs: []string{"orders"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	type query func() (any, error)
	for _, tc := range []struct {
		args []string
		in   query
	}{
		{[]string{"workers"}, func() (any, error) { return in.Workers(ctx) }},
		{[]string{"leases"}, func() (any, error) { return in.Leases(ctx) }},
		{[]string{"pipelines"}, func() (any, error) { return in.Pipelines(ctx) }},
		{[]string{"runs"}, func() (any, error) { return in.Runs(ctx, distributed.RunQuery{Limit: 20}) }},
		{[]string{"pause", "orders"}, func() (any, error) { return in.Pause(ctx, "orders", "") }},
		{[]string{"resume", "orders"}, func() (any, error) { return in.Resume(ctx, "orders") }},
	} {
		code, out, errOut := run(append(tc.args, "--json")...)
		if code != 0 {
			t.Fatalf("fleet %v --json: exit %d: %s", tc.args, code, errOut)
		}
		v, err := tc.in()
		if err != nil {
			t.Fatalf("inspector for %v: %v", tc.args, err)
		}
		want, _ := json.Marshal(v)
		if got, wantShape := shapeOf(t, []byte(out)), shapeOf(t, want); got != wantShape {
			t.Errorf("fleet %v --json has the shape\n%s\nthe inspector's is\n%s", tc.args, got, wantShape)
		}
		if strings.Contains(out, `"expires_in"`) {
			t.Errorf("fleet %v --json still prints expires_in:\n%s", tc.args, out)
		}
	}
	// The lease's expiry is integer nanoseconds, as documented.
	_, out, _ := run("leases", "events", "--json")
	var ls []map[string]any
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls) != 1 {
		t.Fatalf("leases events --json: %v\n%s", err, out)
	}
	if ns, ok := ls[0]["expires_in_ns"].(float64); !ok || ns <= 0 || ns > float64(5*time.Second) || ls[0]["holder_alive"] != true {
		t.Errorf("events' lease: expires_in_ns %v, holder_alive %v; want (0, 5s] in ns and true", ls[0]["expires_in_ns"], ls[0]["holder_alive"])
	}
}
