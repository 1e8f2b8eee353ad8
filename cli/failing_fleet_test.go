package cli_test

import (
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
)

// A pipeline whose source file is missing fails at every run.
const failingConfig = `format = "agora/v1"

[pipelines.broken]
error_backoff = "1s"
max_consecutive_errors = 3

[pipelines.broken.source]
type = "file"
path = "${OUT_DIR}/missing.jsonl"

[pipelines.broken.schedule]
${SCHEDULE}

[[pipelines.broken.sinks]]
type = "file"
path = "${OUT_DIR}/${REPLICA}.jsonl"
`

// TestThreeReplicasShareAFailingPipelinesCountAndBackoff: three replicas
// of agora worker --config on one Redis, a pipeline that always fails,
// error_backoff 1s and max_consecutive_errors 3. The fleet makes at most 3
// attempts (read from the run history, as "fleet runs" shows it), no two
// within 0.8 s, and every replica stops with the terminal error naming the
// pipeline, the count and the last error, exiting 1.
func TestThreeReplicasShareAFailingPipelinesCountAndBackoff(t *testing.T) {
	runFailingFleet(t, everySecond, false)
}

// TestThreeReplicasRetryAFailedCronSlotOnce: the same fleet with a cron
// schedule every 4 s: the retries of the failed slot (after 1 s, then 2 s
// of backoff, both before the next slot) are that slot, each made once,
// by one replica, whichever it is.
func TestThreeReplicasRetryAFailedCronSlotOnce(t *testing.T) {
	runs := runFailingFleet(t, `mode = "cron"
expr = "*/4 * * * * *"`, false)
	for _, r := range runs[1:] {
		if r.RunNumber != runs[0].RunNumber {
			t.Errorf("attempt of run %d after run %d: the retries of a failed cron slot are that slot", r.RunNumber, runs[0].RunNumber)
		}
	}
	// The history names a slot by its Unix second; a run may begin up to
	// the lease-ahead bound before its slot (asked ahead, started at the
	// boundary by a clock a fraction behind the server's).
	if slot := runs[0].RunNumber; slot%4 != 0 || runs[0].Start.Before(time.Unix(slot, 0).Add(-distributed.MaxLeaseAhead)) || runs[0].Start.After(time.Unix(slot, 0).Add(2*time.Second)) {
		t.Errorf("run number %d is not the slot of the first attempt, at %s", slot, runs[0].Start)
	}
}

// everySecond is the schedule of the repro.
const everySecond = `mode = "every"
seconds = 1`

// TestFailingFleetSurvivesAReplicaKilledMidStreak: the same fleet, with a
// replica SIGKILLed right after the first failed attempt and started
// again. It joins the running count and backoff (a count below the
// maximum is not reset), so the fleet still makes at most 3 attempts.
func TestFailingFleetSurvivesAReplicaKilledMidStreak(t *testing.T) {
	runFailingFleet(t, everySecond, true)
}

// runFailingFleet runs the fleet with schedule, checks it, and returns the
// run history in start order.
func runFailingFleet(t *testing.T, schedule string, kill bool) []history.Record {
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", strings.Replace(failingConfig, "${SCHEDULE}", schedule, 1))
	start := func(name string) *agoraProc {
		return startAgora(t, dir, []string{
			"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL(),
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=10",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
			"REPLICA=" + name, "OUT_DIR=" + dir,
		}, "worker", "--config", path, "-log-format", "json", "-health-port", "0")
	}
	env := []string{"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL()}
	attempts := func() []history.Record { return fleetRuns(t, dir, env, "broken") }
	procs := []*agoraProc{start("r1"), start("r2"), start("r3")}
	if kill {
		deadline := time.Now().Add(30 * time.Second)
		for len(attempts()) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no failed attempt within 30 s")
			}
			time.Sleep(100 * time.Millisecond)
		}
		procs[0].signal(t, syscall.SIGKILL)
		procs[0].wait(t, 10*time.Second)
		procs[0] = start("r1-again")
	}
	// 1 s + 2 s of backoff between the three attempts; the replicas must
	// all have stopped well within this.
	for i, p := range procs {
		if code := p.wait(t, 60*time.Second); code != 1 {
			t.Errorf("replica r%d exited %d, want 1\n%s", i+1, code, p.stderr.String())
		}
		errOut := p.stderr.String()
		for _, want := range []string{`pipeline \"broken\" stopped after 3 consecutive failed runs`, "missing.jsonl"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("replica r%d: no %q in its output:\n%s", i+1, want, errOut)
			}
		}
	}

	runs := attempts()
	if len(runs) == 0 || len(runs) > 3 {
		t.Fatalf("%d attempts in the run history, want 1 to 3 (the fleet's, not each replica's): %+v", len(runs), runs)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Start.Before(runs[j].Start) })
	var desc []string
	for _, r := range runs {
		desc = append(desc, fmt.Sprintf("%s run %d token %d by %s at %s", r.Outcome, r.RunNumber, r.FencingToken, r.WorkerID, r.Start.Format("15:04:05.000")))
		if r.Outcome != history.OutcomeFailed {
			t.Errorf("outcome %s, want failed", r.Outcome)
		}
	}
	for i := 1; i < len(runs); i++ {
		if gap := runs[i].Start.Sub(runs[i-1].End); gap < 800*time.Millisecond {
			t.Errorf("attempts %d and %d only %s apart, want at least 0.8 s:\n%s", i, i+1, gap, strings.Join(desc, "\n"))
		}
	}
	if len(runs) != 3 {
		t.Errorf("%d attempts, want the fleet's 3:\n%s", len(runs), strings.Join(desc, "\n"))
	}
	return runs
}
