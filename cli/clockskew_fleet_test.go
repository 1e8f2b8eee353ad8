package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/internal/pgtest"
	"github.com/agora-etl/agora/internal/redistest"
)

// Replicas whose clocks disagree: agora worker --config built with
// -tags agora_testclock, at offsets 0, +2 s, -2 s and +1 h (and a plain
// build given the offset variable, which must ignore it), write one row
// per cron second into PostgreSQL while the coordination Redis restarts
// empty. No slot gets two rows, no row is written before its slot began
// (by the shared clock of this machine, which PostgreSQL and Redis read),
// and the fleet still runs at least 80 % of the slots.

// testClockEnv is the variable a -tags agora_testclock build reads.
const testClockEnv = "AGORA_TEST_CLOCK_OFFSET"

var (
	testClockBinOnce sync.Once
	testClockBin     string
	testClockBinErr  error
)

// agoraTestClockBin builds, once, the agora command with -tags
// agora_testclock next to agoraBin.
func agoraTestClockBin(t *testing.T) string {
	t.Helper()
	testClockBinOnce.Do(func() {
		bin := filepath.Join(filepath.Dir(agoraBin), "agora-testclock")
		build := exec.Command("go", "build", "-tags", "agora_testclock", "-o", bin, "github.com/agora-etl/agora/cmd/agora")
		var out bytes.Buffer
		build.Stdout, build.Stderr = &out, &out
		if err := build.Run(); err != nil {
			testClockBinErr = fmt.Errorf("building agora with -tags agora_testclock: %v\n%s", err, out.String())
			return
		}
		testClockBin = bin
	})
	if testClockBinErr != nil {
		t.Fatal(testClockBinErr)
	}
	return testClockBin
}

// skewConfig is one pipeline per cron second whose row carries its slot,
// token, replica and the database's clock when the source ran.
const skewConfig = `format = "agora/v1"

[pipelines.skew.source]
type = "postgres"
url = "${PG_URL}"
query = "SELECT :run_number::bigint AS run, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker, extract(epoch FROM clock_timestamp())::float8 AS at"

[pipelines.skew.schedule]
mode = "cron"
expr = "* * * * * *"

[[pipelines.skew.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "rows_skew"
columns = ["run", "token", "worker", "at"]
`

// skewReplica is one replica of the clock-skew fleet.
type skewReplica struct {
	name   string
	offset string // AGORA_TEST_CLOCK_OFFSET; "" for none
	tagged bool   // built with -tags agora_testclock
	warns  bool   // its clock is off the server's by more than the 1 s bound
}

var skewReplicas = []skewReplica{
	{name: "zero", offset: "0s", tagged: true},
	{name: "ahead2s", offset: "2s", tagged: true, warns: true},
	{name: "behind2s", offset: "-2s", tagged: true, warns: true},
	{name: "ahead1h", offset: "1h", tagged: true, warns: true},
	{name: "untagged", offset: "1h"}, // the variable does nothing here
}

func TestConfigReplicasWithSkewedClocksRunEachSlotOnceAndNoneEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 20 seconds")
	}
	runSkewFleet(t, pgtest.Start(t), 16*time.Second)
}

// TestSoakConfigReplicasWithSkewedClocks runs the fleet for 60 s per run,
// AGORA_SOAK_RUNS times, with AGORA_SOAK=1 (make soak).
func TestSoakConfigReplicasWithSkewedClocks(t *testing.T) {
	runs := soakRuns(t)
	pg := pgtest.Start(t)
	for i := range runs {
		t.Run(fmt.Sprintf("run%d", i+1), func(t *testing.T) { runSkewFleet(t, pg, 60*time.Second) })
	}
}

// skewRow is one row of the clock-skew fleet.
type skewRow struct {
	run, token int64
	worker     string
	at         float64
}

func runSkewFleet(t *testing.T, pg *pgtest.Server, runFor time.Duration) {
	tagged := agoraTestClockBin(t)
	srv := redistest.Start(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE rows_skew (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL, at float8 NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", skewConfig)
	procs := make([]*agoraProc, len(skewReplicas))
	for i, r := range skewReplicas {
		env := []string{
			"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL(),
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=3",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
			"PG_URL=" + url, "REPLICA=" + r.name,
			testClockEnv + "=" + r.offset,
		}
		args := []string{"worker", "--config", path, "-log-format", "json", "-health-port", "0"}
		if r.tagged {
			procs[i] = startAgoraBin(t, tagged, dir, env, args...)
		} else {
			procs[i] = startAgora(t, dir, env, args...)
		}
	}
	waitRows(t, conn, "skew", 2, 30*time.Second, procs...)

	time.Sleep(runFor / 2)
	restart := time.Now()
	srv.Restart()
	time.Sleep(runFor / 2)
	for _, p := range procs {
		p.signal(t, syscall.SIGINT)
	}
	for _, p := range procs {
		p.wait(t, 20*time.Second)
	}

	rows := readSkewRows(t, conn)
	byRun := map[int64][]skewRow{}
	byWorker := map[string]int{}
	lo, hi := int64(math.MaxInt64), int64(0)
	future := 0
	for _, r := range rows {
		byRun[r.run] = append(byRun[r.run], r)
		byWorker[r.worker]++
		lo, hi = min(lo, r.run), max(hi, r.run)
		// A slot may be granted MaxLeaseAhead (250 ms) before it begins,
		// and the run then waits for its boundary; 50 ms more for the
		// clocks' reading.
		if early := float64(r.run) - r.at; early > 0.3 {
			future++
			t.Errorf("slot %d written by %s at %.3f, %.3f s before it began", r.run, r.worker, r.at, early)
		}
	}
	dups := 0
	for run, rs := range byRun {
		if len(rs) > 1 {
			dups++
			t.Errorf("slot %d has %d rows: %+v", run, len(rs), rs)
		}
	}
	span := hi - lo + 1
	if len(rows) == 0 || float64(len(byRun)) < 0.8*float64(span) {
		t.Errorf("%d of the %d slots from %d to %d ran; want at least 80 %%", len(byRun), span, lo, hi)
	}
	if byWorker["ahead1h"] != 0 {
		t.Errorf("the replica an hour ahead wrote %d rows; want none", byWorker["ahead1h"])
	}
	t.Logf("%d slots from %d to %d, %d run (%.0f %%), Redis restarted empty at %s; rows per replica %v; %d slots with two rows, %d rows from the future",
		span, lo, hi, len(byRun), 100*float64(len(byRun))/float64(span), restart.Format("15:04:05.000"), byWorker, dups, future)

	for i, r := range skewReplicas {
		logs := procs[i].stderr.String()
		shifted := countLogs(logs, func(m map[string]any) bool {
			return m["level"] == "WARN" && m["variable"] == testClockEnv
		})
		switch want := r.tagged && r.offset != "0s"; {
		case want && shifted != 1:
			t.Errorf("%s: %d WARN lines naming %s; want one", r.name, shifted, testClockEnv)
		case !want && shifted != 0:
			t.Errorf("%s: %d WARN lines naming %s; want none", r.name, shifted, testClockEnv)
		}
		skewWarn := countLogs(logs, func(m map[string]any) bool {
			msg, _ := m["msg"].(string)
			return m["level"] == "WARN" && strings.Contains(msg, "clock differs from the Redis server's")
		})
		// Once per process, whatever the Redis restart did.
		if want := map[bool]int{true: 1, false: 0}[r.warns]; skewWarn != want {
			t.Errorf("%s: %d clock-offset warnings; want %d", r.name, skewWarn, want)
		}
	}
}

// countLogs counts the JSON log lines of logs that match.
func countLogs(logs string, match func(map[string]any) bool) int {
	n := 0
	for _, l := range lines(logs) {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && match(m) {
			n++
		}
	}
	return n
}

// readSkewRows returns the fleet's rows in the order they were written.
func readSkewRows(t *testing.T, conn *pgx.Conn) []skewRow {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT run, token, worker, at FROM rows_skew ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (skewRow, error) {
		var s skewRow
		err := r.Scan(&s.run, &s.token, &s.worker, &s.at)
		return s, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
