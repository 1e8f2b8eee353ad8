package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/history"
)

// A pipeline whose input arrives late: every run fails until the file
// exists, and each run that succeeds appends the one record to its
// replica's file.
const lateInputConfig = `format = "agora/v1"

[pipelines.late]
error_backoff = "4s"

[pipelines.late.source]
type = "file"
path = "${OUT_DIR}/input.jsonl"

[pipelines.late.schedule]
mode = "cron"
expr = "*/10 * * * * *"

[[pipelines.late.sinks]]
type = "file"
path = "${OUT_DIR}/${REPLICA}.jsonl"
`

// TestThreeReplicasRetryOrTriggerALateSlotOnce: the ordinary day of a
// late input on three replicas. Slot S fails (no input yet) and the fleet
// will retry it after its backoff; the operator puts the input in place
// and runs the slot at once with fleet trigger --slot. The slot's record
// is written once: the schedule's retry is refused the slot the backfill
// completed (or, had the retry come first, the backfill finds the slot
// completed).
func TestThreeReplicasRetryOrTriggerALateSlotOnce(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", lateInputConfig)
	env := []string{"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL()}
	var procs []*agoraProc
	for _, name := range []string{"r1", "r2", "r3"} {
		procs = append(procs, startAgora(t, dir, append(env,
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=10", "AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
			"REPLICA="+name, "OUT_DIR="+dir),
			"worker", "--config", path, "-log-format", "json", "-health-port", "0"))
	}
	runs := func() []history.Record { return fleetRuns(t, dir, env, "late") }
	// The first failed attempt names the slot.
	var slot int64
	for deadline := time.Now().Add(25 * time.Second); slot == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no failed attempt within 25 s")
		}
		for _, r := range runs() {
			if r.Outcome == history.OutcomeFailed {
				slot = r.RunNumber
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "input.jsonl"), []byte(`{"id":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(slot, 0).UTC().Format(time.RFC3339)
	if code, out, errOut := runAgora(t, dir, env, "fleet", "trigger", "late", "--slot", at); code != 0 {
		t.Fatalf("fleet trigger --slot %s: exit %d\n%s%s", at, code, out, errOut)
	}
	// The retry comes 4 s after the failure, the next slot 10 s after S:
	// wait past the retry, well before the next slot.
	time.Sleep(time.Until(time.Unix(slot, 0).Add(8 * time.Second)))
	for _, p := range procs {
		p.signal(t, syscall.SIGINT)
	}
	for _, p := range procs {
		p.wait(t, 30*time.Second)
	}

	var lines []string
	for _, name := range []string{"r1", "r2", "r3"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".jsonl"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				lines = append(lines, name+": "+l)
			}
		}
	}
	var succeeded []string
	for _, r := range runs() {
		if r.RunNumber == slot && r.Outcome == history.OutcomeSucceeded {
			kind := "scheduled"
			if r.Backfill {
				kind = "backfill"
			}
			succeeded = append(succeeded, kind+" by "+r.WorkerID)
		}
	}
	if len(lines) != 1 || len(succeeded) != 1 {
		t.Fatalf("slot %s: %d records written (%v), %d successful runs (%v); want one of each", at, len(lines), lines, len(succeeded), succeeded)
	}
	t.Logf("slot %s failed, then ran once (%s) with the input in place; the schedule's retry found it completed", at, succeeded[0])
}
