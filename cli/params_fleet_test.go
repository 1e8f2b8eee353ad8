package cli_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl/sqlite"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/history"
)

// A pipeline whose source reads its run parameters and whose schedule
// never fires during the test: only a trigger runs it.
const paramsConfig = `format = "agora/v1"

[pipelines.daily]
params = { day = "1970-01-01", who = "schedule" }
source = { type = "sqlite", path = "in.db", query = "SELECT :param_day AS day, :param_who AS who" }
schedule = { mode = "cron", expr = "0 0 1 1 *" }
transforms = [{ type = "map", fields = { tag = "'for ' + params.day" } }]

[[pipelines.daily.sinks]]
type = "sqlite"
path = "out.db"
table = "days"
create_table = true
`

// TestTriggerParamReachesSQLAndTheRunHistory: two replicas of agora worker
// --config on a real Redis; "agora fleet trigger daily --param
// day=2026-01-01" makes one run, whose :param_day and params.day read
// 2026-01-01 (and whose undeclared-by-the-trigger :param_who reads the
// default), and "fleet runs --json" shows the run with its parameters.
func TestTriggerParamReachesSQLAndTheRunHistory(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", paramsConfig)
	env := []string{"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL()}
	var procs []*agoraProc
	for range 2 {
		procs = append(procs, startAgora(t, dir, env, "worker", "--config", path, "-health-port", "0"))
	}
	logs := func() string {
		var b strings.Builder
		for i, p := range procs {
			b.WriteString(fmt.Sprintf("replica %d:\n%s\n", i, p.stderr.String()))
		}
		return b.String()
	}

	if code, _, errOut := runAgora(t, dir, env, "fleet", "trigger", "daily", "--param", "day"); code != 2 || !strings.Contains(errOut, `"day" is not key=value`) {
		t.Fatalf("a --param without =: exit %d\n%s", code, errOut)
	}
	// The trigger is refused until a replica has registered the pipeline.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out, errOut := runAgora(t, dir, env, "fleet", "trigger", "daily", "--param", "day=2026-01-01")
		if code == 0 {
			if !strings.Contains(out, "with parameters day=2026-01-01") {
				t.Fatalf("fleet trigger says %q", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fleet trigger: exit %d\n%s%s", code, out, errOut)
		}
		time.Sleep(200 * time.Millisecond)
	}

	var runs []history.Record
	for deadline = time.Now().Add(30 * time.Second); len(runs) == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no run recorded within 30 s of the trigger\n%s", logs())
		}
		runs = fleetRuns(t, dir, env, "daily")
	}
	if len(runs) != 1 || runs[0].Outcome != history.OutcomeSucceeded || !runs[0].Triggered ||
		!maps.Equal(runs[0].Params, map[string]string{"day": "2026-01-01"}) {
		t.Fatalf("run history %+v; want one triggered success with day=2026-01-01", runs)
	}
	if code, out, _ := runAgora(t, dir, env, "fleet", "runs", "daily"); code != 0 || !strings.Contains(out, "PARAMS") || !strings.Contains(out, " day=2026-01-01 ") {
		t.Fatalf("fleet runs table: exit %d\n%s", code, out)
	}

	db, err := sqlite.Open(filepath.Join(dir, "out.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT day, who, tag FROM days")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var day, who, tag string
		if err := rows.Scan(&day, &who, &tag); err != nil {
			t.Fatal(err)
		}
		got = append(got, day+"|"+who+"|"+tag)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "2026-01-01|schedule|for 2026-01-01" {
		t.Fatalf("rows written %q; want one with day 2026-01-01, the default who, and the CEL tag", got)
	}
}
