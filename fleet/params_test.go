package fleet_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
)

// TestTriggerParamMistakesAreUsageErrors: each bad --param is exit 2 with
// a message naming the argument, before any Redis is asked.
func TestTriggerParamMistakesAreUsageErrors(t *testing.T) {
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "redis://127.0.0.1:1/0")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trigger", "orders", "--param", "day"}, `"day" is not key=value`},
		{[]string{"trigger", "orders", "--param", "=x"}, `"=x" has an empty key`},
		{[]string{"trigger", "orders", "--param", "1day=x"}, `key "1day" is not an identifier`},
		{[]string{"trigger", "orders", "--param", "a-b=x"}, `key "a-b" is not an identifier`},
		{[]string{"trigger", "orders", "--param", "day=1", "--param", "day=2"}, `"day=2": key "day" is given twice (first as "day=1")`},
		{[]string{"pause", "orders", "--param", "day=1"}, "only trigger takes it"},
	} {
		code, _, errOut := run(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("fleet %q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestTriggerWithParamsIsAuditedAndRunsOnce: "fleet trigger --param" asks
// one replica for a run and the audit log shows the parameters.
func TestTriggerWithParamsIsAuditedAndRunsOnce(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 2, &runs, &mu)
	code, out, errOut := run("trigger", "orders", "--param", "day=2026-01-01", "--param", "q=a=b")
	if code != 0 || !strings.Contains(out, "with parameters day=2026-01-01 q=a=b") {
		t.Fatalf("trigger: exit %d\n%s%s", code, out, errOut)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := runs
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs of orders, want the triggered one", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, out, _ = run("audit", "orders", "--json")
	var entries []struct {
		Action string            `json:"action"`
		Params map[string]string `json:"params"`
	}
	if err := json.Unmarshal([]byte(out), &entries); code != 0 || err != nil || len(entries) != 1 ||
		entries[0].Action != "trigger" || entries[0].Params["day"] != "2026-01-01" || entries[0].Params["q"] != "a=b" {
		t.Fatalf("audit --json: exit %d, %v\n%s", code, err, out)
	}
	code, out, _ = run("audit", "orders")
	if rows := aligned(t, out); code != 0 || len(rows) != 1 || rows[0][6] != "day=2026-01-01 q=a=b" {
		t.Fatalf("audit table:\n%s", out)
	}
}
