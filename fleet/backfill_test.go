package fleet_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

func TestFleetBackfillUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backfill", "orders"}, "backfill needs --from and --to"},
		{[]string{"backfill", "orders", "--from", "-2h"}, "backfill needs --from and --to"},
		{[]string{"backfill", "orders", "--from", "yesterday", "--to", "0s"}, `--from "yesterday": want an RFC 3339 time`},
		{[]string{"backfill", "orders", "--from", "-1h", "--to", "-2h"}, "is not before --to"},
		{[]string{"backfill", "orders", "--from", "-2h", "--to", "-1h", "--parallel", "-1"}, "--parallel -1: must be 1 or more"},
		{[]string{"backfill", "orders", "--status", "--cancel"}, "--status and --cancel do not go together"},
		{[]string{"backfill", "orders", "--status", "--from", "-1h"}, "backfill --status takes no --from"},
		{[]string{"backfill", "--from", "-2h", "--to", "-1h"}, "backfill takes one pipeline id"},
		{[]string{"trigger", "orders", "--parallel", "2"}, "only backfill takes it"},
	} {
		code, _, errOut := run(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestFleetBackfillStartStatusCancel drives a backfill of a live
// replica's hourly pipeline from the command line: started with its slot
// count, refused while it runs, shown, cancelled, and audited.
func TestFleetBackfillStartStatusCancel(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 1, &runs, &mu)

	if code, _, errOut := run("backfill", "orders", "--status"); code != 1 || !strings.Contains(errOut, "no backfill of orders: none was started, or the last one ended more than 7 days ago") {
		t.Fatalf("backfill --status before any: exit %d: %s", code, errOut)
	}
	// A pipeline no live worker runs is a typo to name, not "none was started".
	for _, flag := range []string{"--status", "--cancel"} {
		code, out, errOut := run("backfill", "ordrs", flag)
		if code != 1 || !strings.Contains(errOut, `no backfill of "ordrs": unknown pipeline "ordrs": no live worker runs it (known: events, orders)`) {
			t.Fatalf("backfill ordrs %s: exit %d\n%s%s", flag, code, out, errOut)
		}
	}
	to := time.Now().UTC().Truncate(time.Hour)
	from := to.Add(-3 * time.Hour)
	code, out, errOut := run("backfill", "orders", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--parallel", "2", "--reason", "late data")
	if code != 0 || !strings.Contains(out, "backfill of orders started: 3 slots in ["+from.Format(time.RFC3339)) || !strings.Contains(out, "2 at a time") {
		t.Fatalf("backfill: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run("backfill", "orders", "--from", "-2h", "--to", "-1h"); code != 1 || !strings.Contains(errOut, `a backfill is already running for "orders"; cancel it first`) {
		t.Fatalf("second backfill: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run("backfill", "events", "--from", "-2h", "--to", "-1h"); code != 1 || !strings.Contains(errOut, "no slots to backfill") {
		t.Fatalf("backfill of a continuous pipeline: exit %d: %s", code, errOut)
	}
	code, out, errOut = run("--json", "backfill", "orders", "--status")
	var p distributed.BackfillProgress
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.Total != 3 || p.Request.Parallel != 2 || p.Request.Reason != "late data" || !p.Request.From.Equal(from) {
		t.Fatalf("backfill --status --json: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := run("backfill", "orders", "--status"); code != 0 || !strings.Contains(out, "state      "+string(p.State)) || !strings.Contains(out, "reason     late data") {
		t.Fatalf("backfill --status:\n%s", out)
	}
	code, out, _ = run("pipelines")
	var cell string
	for _, row := range aligned(t, out) {
		if row[0] == "orders" {
			cell = row[len(row)-2]
		}
	}
	if code != 0 || cell != "0/3" {
		t.Fatalf("pipelines: BACKFILL of orders = %q, want 0/3:\n%s", cell, out)
	}
	if code, out, errOut := run("backfill", "orders", "--cancel", "--reason", "wrong range"); code != 0 || !strings.Contains(out, "cancelled the backfill of orders") {
		t.Fatalf("backfill --cancel: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := run("backfill", "orders", "--cancel"); code != 0 || !strings.Contains(out, "no backfill of orders is running") {
		t.Fatalf("second cancel:\n%s", out)
	}
	if _, out, _ := run("--json", "pipelines"); strings.Contains(out, `"backfill"`) {
		t.Fatalf("a cancelled backfill is still in fleet pipelines --json:\n%s", out)
	}
	code, out, _ = run("audit", "orders")
	if code != 0 || !strings.Contains(out, "backfill_cancel") || !strings.Contains(out, "wrong range") || !strings.Contains(out, "late data") {
		t.Fatalf("audit:\n%s", out)
	}
}

// TestFleetTriggerSlot runs one slot of the hourly pipeline as a backfill
// of one, with parameters; a time between slots and --reprocess without
// --slot are refused.
func TestFleetTriggerSlot(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 1, &runs, &mu)

	if code, _, errOut := run("trigger", "orders", "--reprocess"); code != 2 || !strings.Contains(errOut, "--reprocess needs --slot") {
		t.Fatalf("--reprocess without --slot: exit %d: %s", code, errOut)
	}
	slot := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
	if code, _, errOut := run("trigger", "orders", "--slot", slot.Add(time.Minute).Format(time.RFC3339)); code != 1 || !strings.Contains(errOut, "the slots around it are "+slot.Format(time.RFC3339)) {
		t.Fatalf("a time between slots: exit %d: %s", code, errOut)
	}
	code, out, errOut := run("trigger", "orders", "--slot", slot.Format(time.RFC3339), "--param", "day=2026-01-01", "--reprocess")
	if code != 0 || !strings.Contains(out, "triggered slot "+slot.Format(time.RFC3339)+" of orders with day=2026-01-01") || !strings.Contains(out, "completed slots run again") {
		t.Fatalf("trigger --slot: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run("--json", "backfill", "orders", "--status")
	var p distributed.BackfillProgress
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.Total != 1 || !p.Request.From.Equal(slot) || !p.Request.Reprocess || p.Request.Params["day"] != "2026-01-01" {
		t.Fatalf("the slot's backfill: %s", out)
	}
}
