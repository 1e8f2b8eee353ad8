package fleet_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFleetPipelinesShowTheLastMissedDeadline: the slot the fleet
// reported as missing its deadline (written as deadline.lua writes it) is
// in the pipelines table's DEADLINE MISSED column and the JSON's
// last_deadline_missed; a pipeline with none shows "-" and no field; a
// deadline key of foreign data shows no slot and is named under the table.
func TestFleetPipelinesShowTheLastMissedDeadline(t *testing.T) {
	admin := oneReplica(t)
	ctx := context.Background()
	const ordersKey, eventsKey = "agora:distributed:deadline:{orders}", "agora:distributed:deadline:{events}"
	slot := time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC)
	if err := admin.Set(ctx, ordersKey, strconv.FormatInt(slot.Unix(), 10), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := run("pipelines")
	if code != 0 || !strings.Contains(out, "  DEADLINE MISSED ") {
		t.Fatalf("pipelines: exit %d\n%s%s", code, out, errOut)
	}
	rows := aligned(t, out)
	if len(rows) != 2 || rows[0][0] != "events" || rows[0][11] != "-" || rows[1][0] != "orders" || rows[1][11] != "2026-12-03T02:00:00Z" {
		t.Fatalf("pipelines table; want orders' deadline missed at 02:00:\n%s", out)
	}
	var ps []map[string]any
	code, out, _ = run("pipelines", "--json")
	if err := json.Unmarshal([]byte(out), &ps); code != 0 || err != nil || len(ps) != 2 {
		t.Fatalf("pipelines --json: exit %d, %v\n%s", code, err, out)
	}
	if _, ok := ps[0]["last_deadline_missed"]; ok {
		t.Errorf("events in JSON = %v; want no last_deadline_missed", ps[0])
	}
	if v := ps[1]["last_deadline_missed"]; v != "2026-12-03T02:00:00Z" {
		t.Errorf("orders' last_deadline_missed = %v; want 2026-12-03T02:00:00Z", v)
	}

	// Foreign data at events' deadline key: no slot shown, the key named.
	if err := admin.Set(ctx, eventsKey, "soon", 0).Err(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run("pipelines")
	if code != 0 || !strings.Contains(out, "problem: events: "+eventsKey) || strings.Count(out, "2026-12-03T02:00:00Z") != 1 {
		t.Fatalf("pipelines with a foreign deadline key: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run("pipelines", "--json")
	ps = nil
	if err := json.Unmarshal([]byte(out), &ps); code != 0 || err != nil || len(ps) != 2 {
		t.Fatalf("pipelines --json: exit %d, %v\n%s", code, err, out)
	}
	if _, ok := ps[0]["last_deadline_missed"]; ok || !strings.Contains(out, eventsKey) {
		t.Errorf("events in JSON with a foreign deadline key = %v; want no last_deadline_missed and the key named", ps[0])
	}
}
