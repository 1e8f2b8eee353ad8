package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/internal/pgtest"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// Replicas of agora worker --config writing into PostgreSQL while, in turn
// every three seconds, a replica is stopped past the lease TTL, the
// coordination Redis restarts empty on its port, and a replica is killed
// and started again. Each pipeline's slot has at most one row, no row
// carries a token below an earlier row's, and a Redis restart costs each
// pipeline the slot in progress and those that begin before the fleet is
// back (the new epoch plus the lease-ahead lead), no more.

// soakEnv turns the soak tests on; soakRunsEnv sets how many 60 s runs each
// makes (default 10).
const (
	soakEnv     = "AGORA_SOAK"
	soakRunsEnv = "AGORA_SOAK_RUNS"
)

// lossPipelines are the fleet's pipelines, each writing into its own table
// (and so fencing its own resource).
var lossPipelines = []string{"p1", "p2", "p3"}

// faultPeriod separates two faults; a stopped replica stays stopped for
// stopFor, past the 3 s lease TTL and record expiry.
const (
	faultPeriod = 3 * time.Second
	stopFor     = 4500 * time.Millisecond
)

func lossConfig() string {
	var b strings.Builder
	b.WriteString("format = \"agora/v1\"\n")
	for _, p := range lossPipelines {
		fmt.Fprintf(&b, `
[pipelines.%[1]s.source]
type = "postgres"
url = "${PG_URL}"
query = "SELECT :run_number::bigint AS run, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker"

[pipelines.%[1]s.schedule]
mode = "cron"
expr = "* * * * * *"

[[pipelines.%[1]s.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "rows_%[1]s"
columns = ["run", "token", "worker"]
`, p)
	}
	return b.String()
}

// TestConfigReplicasEmptyRedisRestartRunEachSlotOnce is the short run of
// make test: five faults over 15 s, two empty Redis restarts among them.
func TestConfigReplicasEmptyRedisRestartRunEachSlotOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 20 seconds")
	}
	runConfigFleetUnderFaults(t, pgtest.Start(t), 14*time.Second)
}

// TestSoakConfigReplicasEmptyRedisRestart repeats the fleet for 60 s per
// run, AGORA_SOAK_RUNS times (default 10), with AGORA_SOAK=1 (make soak).
func TestSoakConfigReplicasEmptyRedisRestart(t *testing.T) {
	runs := soakRuns(t)
	pg := pgtest.Start(t)
	for i := range runs {
		t.Run(fmt.Sprintf("run%d", i+1), func(t *testing.T) { runConfigFleetUnderFaults(t, pg, 60*time.Second) })
	}
}

// soakRuns skips the test unless AGORA_SOAK=1 and returns AGORA_SOAK_RUNS.
func soakRuns(t *testing.T) int {
	t.Helper()
	if os.Getenv(soakEnv) != "1" {
		t.Skipf("a soak test: set %s=1 (make soak)", soakEnv)
	}
	runs := 10
	if v := os.Getenv(soakRunsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of runs", soakRunsEnv, v)
		}
		runs = n
	}
	return runs
}

// slotRow is one row a sink wrote.
type slotRow struct {
	run, token int64
	worker     string
}

// runLog is a replica's log line about a run.
type runLog struct {
	Msg      string `json:"msg"`
	Pipeline string `json:"pipeline_id"`
	Run      int64  `json:"run_number"`
	Token    int64  `json:"fencing_token"`
}

func runConfigFleetUnderFaults(t *testing.T, pg *pgtest.Server, faultsFor time.Duration) {
	srv := redistest.Start(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, p := range lossPipelines {
		q := fmt.Sprintf("CREATE TABLE rows_%s (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL)", p)
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", lossConfig())
	var all []*agoraProc // every process started, killed ones too, for their logs
	start := func(name string) *agoraProc {
		p := startAgora(t, dir, []string{
			"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL(),
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=3",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
			"PG_URL=" + url, "REPLICA=" + name,
		}, "worker", "--config", path, "-log-format", "json", "-log-level", "debug", "-health-port", "0")
		all = append(all, p)
		return p
	}
	procs := []*agoraProc{start("r1"), start("r2"), start("r3")}
	t.Cleanup(func() {
		if t.Failed() {
			// What went wrong for the fleet rather than for one slot: the
			// replicas' warnings and errors (failed runs, refusals).
			for i, p := range all {
				t.Logf("process %d (%s): warnings and errors:\n%s", i+1, p.cmd.Env[len(p.cmd.Env)-1], about(p.stderr.String(), "\x00"))
			}
		}
	})
	waitRows(t, conn, lossPipelines[0], 2, 30*time.Second, procs...)

	var restarts []time.Time
	var stopped sync.WaitGroup
	begin := time.Now()
	for i := 0; time.Since(begin) < faultsFor; i++ {
		victim := (i / 3) % len(procs)
		switch i % 3 {
		case 0:
			p := procs[victim]
			p.signal(t, syscall.SIGSTOP)
			stopped.Add(1)
			time.AfterFunc(stopFor, func() {
				defer stopped.Done()
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
			})
		case 1:
			restarts = append(restarts, time.Now())
			srv.Restart()
		case 2:
			victim = (victim + 1) % len(procs) // not the one stopped last
			procs[victim].signal(t, syscall.SIGKILL)
			procs[victim].wait(t, 10*time.Second)
			procs[victim] = start(fmt.Sprintf("r%d-%d", victim+1, i))
		}
		time.Sleep(faultPeriod)
	}
	stopped.Wait()
	// A last slot or two after the faults, then a clean stop.
	time.Sleep(2 * time.Second)
	for _, p := range procs {
		p.signal(t, syscall.SIGINT)
	}
	for _, p := range procs {
		p.wait(t, 20*time.Second)
	}

	// Runs that began and never finished: their holder was stopped or
	// killed, which explains a missed slot (not a duplicate).
	begun := map[string]map[int64]bool{} // pipeline → slot → unfinished
	for _, p := range all {
		for _, l := range lines(p.stderr.String()) {
			var r runLog
			if json.Unmarshal([]byte(l), &r) != nil || r.Pipeline == "" {
				continue
			}
			if begun[r.Pipeline] == nil {
				begun[r.Pipeline] = map[int64]bool{}
			}
			switch r.Msg {
			case "run started":
				if _, seen := begun[r.Pipeline][r.Run]; !seen {
					begun[r.Pipeline][r.Run] = true
				}
			case "run finished":
				begun[r.Pipeline][r.Run] = false
			}
		}
	}

	// Each restart's epoch, as the first replica back logged it: a slot
	// that begins before it plus the lease-ahead lead is refused as
	// possibly granted in the lost state (the acquire script's rule), so a
	// restart costs the slot in progress and those that begin while the
	// fleet reconnects.
	epochs := restartEpochs(t, all, restarts)

	var dups, regressions, slots, missedByRestart, missedByHolder, missedOther int
	for _, pipeline := range lossPipelines {
		rows := readRows(t, conn, pipeline)
		if len(rows) == 0 {
			t.Fatalf("pipeline %s wrote nothing", pipeline)
		}
		byRun := map[int64][]slotRow{}
		lo, hi := int64(math.MaxInt64), int64(0)
		for i, r := range rows {
			byRun[r.run] = append(byRun[r.run], r)
			lo, hi = min(lo, r.run), max(hi, r.run)
			if i > 0 && r.token < rows[i-1].token {
				regressions++
				t.Errorf("%s: token %d (slot %d, %s) written after token %d (slot %d, %s)",
					pipeline, r.token, r.run, r.worker, rows[i-1].token, rows[i-1].run, rows[i-1].worker)
			}
		}
		for run, rs := range byRun {
			if len(rs) > 1 {
				dups++
				t.Errorf("%s: slot %d has %d rows: %+v", pipeline, run, len(rs), rs)
			}
		}
		slots += len(byRun)
		perRestart := make([]int, len(restarts))
		for s := lo; s <= hi; s++ {
			if len(byRun[s]) > 0 {
				continue
			}
			if heldByFault(begun[pipeline], s) {
				missedByHolder++
				continue
			}
			if r := restartWindow(restarts, epochs, s); r >= 0 {
				missedByRestart++
				perRestart[r]++
				continue
			}
			missedOther++
			t.Logf("%s: slot %d missed, away from any fault window", pipeline, s)
		}
		for r, n := range perRestart {
			if allowed := restartCost(restarts[r], epochs[r]); n > allowed {
				t.Errorf("%s: the Redis restart at %s (epoch %s) cost %d slots; want at most %d: the slot in progress and those beginning before the epoch plus the lease-ahead lead",
					pipeline, restarts[r].Format("15:04:05.000"), epochs[r].Format("15:04:05.000"), n, allowed)
			}
		}
		if want := (hi - lo + 1) / 2; int64(len(byRun)) < want {
			t.Errorf("%s: only %d of the %d slots between %d and %d ran", pipeline, len(byRun), hi-lo+1, lo, hi)
		}
	}
	var back []string // how long after each restart its epoch came
	for i, r := range restarts {
		if epochs[i].IsZero() {
			back = append(back, "no epoch logged")
			continue
		}
		back = append(back, epochs[i].Sub(r).Round(time.Millisecond).String())
	}
	t.Logf("%d slots over %d pipelines, %d Redis restarts (epoch after %s): %d slots with two rows or more, %d token regressions; missed slots: %d around Redis restarts, %d whose holder was stopped or killed, %d other",
		slots, len(lossPipelines), len(restarts), strings.Join(back, ", "), dups, regressions, missedByRestart, missedByHolder, missedOther)
}

// heldByFault reports whether slot s, missed, is explained by a run of the
// pipeline that began at most the record's lifetime and a retry before it
// (4 s) and never finished: its holder was stopped or killed holding the
// lease, which kept the slots after it from being granted until its
// record expired.
func heldByFault(unfinished map[int64]bool, s int64) bool {
	for b := s - 4; b <= s; b++ {
		if unfinished[b] {
			return true
		}
	}
	return false
}

// restartWindow returns the index of the Redis restart whose slots s is
// among (the slot running at the restart, the one before it, whose run may
// not have finished, and those after it until the replicas are back: two,
// or up to the restart's epoch plus the lease-ahead lead), or -1.
func restartWindow(restarts, epochs []time.Time, s int64) int {
	for i, r := range restarts {
		at := r.Unix()
		last := at + 2
		if e := epochs[i]; !e.IsZero() {
			last = max(last, e.Add(distributed.MaxLeaseAhead).Unix())
		}
		if s >= at-1 && s <= last {
			return i
		}
	}
	return -1
}

// restartCost is how many slots a restart at r may cost a pipeline of
// one-second slots: the one in progress, and each that begins after r and
// before the epoch plus the lease-ahead lead (refused as possibly granted
// in the lost state). Without an epoch logged, one.
func restartCost(r, epoch time.Time) int {
	n := 1
	if epoch.IsZero() {
		return n
	}
	for s := r.Unix() + 1; time.Unix(s, 0).Before(epoch.Add(distributed.MaxLeaseAhead)); s++ {
		n++
	}
	return n
}

// restartEpochs returns, for each restart, the first epoch at or after it
// that a replica logged (zero when none did).
func restartEpochs(t *testing.T, procs []*agoraProc, restarts []time.Time) []time.Time {
	t.Helper()
	var seen []time.Time
	for _, p := range procs {
		for _, l := range lines(p.stderr.String()) {
			var e struct {
				Msg   string `json:"msg"`
				Epoch string `json:"epoch"`
			}
			if json.Unmarshal([]byte(l), &e) != nil || e.Epoch == "" || !strings.HasPrefix(e.Msg, "distributed: the coordination state was lost") {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, e.Epoch)
			if err != nil {
				t.Fatalf("epoch %q in %s: %v", e.Epoch, l, err)
			}
			seen = append(seen, at)
		}
	}
	out := make([]time.Time, len(restarts))
	for i, r := range restarts {
		for _, e := range seen {
			if !e.Before(r) && (out[i].IsZero() || e.Before(out[i])) {
				out[i] = e
			}
		}
	}
	return out
}

// readRows returns pipeline's rows in the order they were written.
func readRows(t *testing.T, conn *pgx.Conn, pipeline string) []slotRow {
	t.Helper()
	rows, err := conn.Query(context.Background(), fmt.Sprintf("SELECT run, token, worker FROM rows_%s ORDER BY id", pipeline))
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (slotRow, error) {
		var s slotRow
		err := r.Scan(&s.run, &s.token, &s.worker)
		return s, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitRows waits until pipeline's table, rows_<pipeline>, has n rows.
func waitRows(t *testing.T, conn *pgx.Conn, pipeline string, n int64, timeout time.Duration, procs ...*agoraProc) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var got int64
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM rows_"+pipeline).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			// The replicas' logs say why nothing ran (a refusal, a
			// failing sink, a replica that exited).
			for i, p := range procs {
				t.Logf("replica %d (exited: %v), its lines about %s and its warnings:\n%s", i+1, p.exited(), pipeline, about(p.stderr.String(), pipeline))
			}
			t.Fatalf("only %d rows after %s", got, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
