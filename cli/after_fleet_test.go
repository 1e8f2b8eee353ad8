package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/internal/pgtest"
	"github.com/agora-etl/agora/internal/redistest"
)

// Two pipelines on the same every-second cron schedule, load waiting for
// extract (after = ["extract"]). Extract sleeps 0.2 to 0.6 s in its source
// before it writes its slot, so a load let through at its fire time would
// read the database before extract's row of that slot is there. Load's
// source counts, in its own statement, the rows extract committed for the
// slot (seen) and notes when that statement began (started): the
// database's word that extract's write came first. Every time is the
// database's clock, so the replicas' clocks do not enter the comparison.
const afterFleetConfig = `format = "agora/v1"

[pipelines.extract]
source = { type = "postgres", url = "${PG_URL}", query = "SELECT :run_number::bigint AS run, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker, statement_timestamp() AS started FROM pg_sleep(0.2 + random() * 0.4)" }
schedule = { mode = "cron", expr = "* * * * * *" }

[[pipelines.extract.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "rows_extract"
columns = ["run", "token", "worker", "started"]

[pipelines.load]
after = ["extract"]
source = { type = "postgres", url = "${PG_URL}", query = "SELECT :run_number::bigint AS run, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker, statement_timestamp() AS started, (SELECT count(*) FROM rows_extract e WHERE e.run = :run_number::bigint) AS seen" }
schedule = { mode = "cron", expr = "* * * * * *" }

[[pipelines.load.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "rows_load"
columns = ["run", "token", "worker", "started", "seen"]
`

// afterLeaseTTL is the fleet's lease TTL; afterStopFor, how long a replica
// is stopped: past the TTL, so its leases expire while it cannot know.
const (
	afterLeaseTTL = 3 * time.Second
	afterStopFor  = 4500 * time.Millisecond
)

// afterFleet is three replicas of agora worker --config running
// afterFleetConfig on a real Redis and PostgreSQL.
type afterFleet struct {
	t     *testing.T
	dir   string
	path  string
	redis string
	conn  *pgx.Conn
	pgURL string
	procs []*agoraProc // the live replicas
	all   []*agoraProc // every process started, killed ones too, for their logs
	names []string     // all's replica names
}

// startAfterFleet creates the two tables and starts three replicas. When
// the test fails, it prints every process's lines about load and its
// warnings and errors.
func startAfterFleet(t *testing.T) *afterFleet {
	t.Helper()
	srv := redistest.Start(t)
	pg := pgtest.Start(t)
	f := &afterFleet{t: t, dir: t.TempDir(), redis: srv.URL(), pgURL: pg.NewDatabase(t)}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	f.conn = conn
	// finished is the time of extract's insert, by the database's clock:
	// its commit comes after it.
	for _, q := range []string{
		"CREATE TABLE rows_extract (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL, started timestamptz NOT NULL, finished timestamptz NOT NULL DEFAULT clock_timestamp())",
		"CREATE TABLE rows_load (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL, started timestamptz NOT NULL, seen bigint NOT NULL)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	f.path = writeConfig(t, f.dir, "pipelines.toml", afterFleetConfig)
	for _, name := range []string{"r1", "r2", "r3"} {
		f.procs = append(f.procs, f.start(name))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range f.all {
				t.Logf("process %d (%s, exited: %v): its lines about load, its warnings and errors:\n%s", i+1, f.names[i], p.exited(), about(p.stderr.String(), "load"))
			}
		}
	})
	return f
}

// start starts a replica named name. Debug logs carry "run started",
// which tells which replica runs a pipeline right now.
func (f *afterFleet) start(name string) *agoraProc {
	p := startAgora(f.t, f.dir, []string{
		"AGORA_DISTRIBUTED_REDIS_URL=" + f.redis,
		"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=" + strconv.Itoa(int(afterLeaseTTL/time.Second)),
		"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
		"PG_URL=" + f.pgURL, "REPLICA=" + name,
	}, "worker", "--config", f.path, "-log-format", "json", "-log-level", "debug", "-health-port", "0")
	f.all = append(f.all, p)
	f.names = append(f.names, name)
	return p
}

// stop stops the live replicas with SIGINT and waits for them.
func (f *afterFleet) stop() time.Time {
	at := time.Now()
	for _, p := range f.procs {
		p.signal(f.t, syscall.SIGINT)
	}
	for _, p := range f.procs {
		p.wait(f.t, 20*time.Second)
	}
	return at
}

// fleet runs agora fleet args against the fleet's Redis, failing the test
// unless it exits 0.
func (f *afterFleet) fleet(args ...string) string {
	f.t.Helper()
	code, out, errOut := runAgora(f.t, f.dir, []string{"AGORA_DISTRIBUTED_REDIS_URL=" + f.redis}, append([]string{"fleet"}, args...)...)
	if code != 0 {
		f.t.Fatalf("agora fleet %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// afterLog is a replica's JSON log line about a run or a skipped slot.
type afterLog struct {
	Msg      string `json:"msg"`
	Level    string `json:"level"`
	Pipeline string `json:"pipeline_id"`
	Run      int64  `json:"run_number"`
	Upstream string `json:"upstream"`
	Reason   string `json:"reason"`
}

// logsOf parses the JSON lines of p's log.
func logsOf(p *agoraProc) []afterLog {
	var out []afterLog
	for _, l := range lines(p.stderr.String()) {
		var e afterLog
		if json.Unmarshal([]byte(l), &e) == nil && e.Msg != "" {
			out = append(out, e)
		}
	}
	return out
}

// upstreamSkipMsg is the WARN line of a slot skipped for its upstream.
const upstreamSkipMsg = "slot skipped: its upstream has not completed it"

// upstreamSkips returns, per process of the fleet (killed ones too), the
// slots of load it logged as skipped for its upstream, with the reason.
func (f *afterFleet) upstreamSkips() []map[int64]afterLog {
	out := make([]map[int64]afterLog, len(f.all))
	for i, p := range f.all {
		out[i] = map[int64]afterLog{}
		for _, e := range logsOf(p) {
			if e.Msg == upstreamSkipMsg && e.Pipeline == "load" {
				out[i][e.Run] = e
			}
		}
	}
	return out
}

// runningExtract waits until a live replica has begun a run of extract
// that has not ended, and returns its index in f.procs and the run's slot;
// -1 when none is seen within timeout. Extract sleeps in every run, so one
// is found within a slot or two.
func (f *afterFleet) runningExtract(timeout time.Duration) (int, int64) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for i, p := range f.procs {
			var last afterLog
			for _, e := range logsOf(p) {
				if e.Pipeline == "extract" && strings.HasPrefix(e.Msg, "run ") {
					last = e
				}
			}
			if last.Msg == "run started" {
				return i, last.Run
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return -1, 0
}

// afterRow is one row of rows_extract or rows_load. finished is extract's
// insert time; seen, the extract rows of the slot load's source read.
type afterRow struct {
	run, token, seen  int64
	worker            string
	started, finished time.Time
}

// rows reads pipeline's table in the order of the writes.
func (f *afterFleet) rows(pipeline string) []afterRow {
	f.t.Helper()
	cols := "run, token, worker, started, finished, 0"
	if pipeline == "load" {
		cols = "run, token, worker, started, started, seen"
	}
	rows, err := f.conn.Query(context.Background(), "SELECT "+cols+" FROM rows_"+pipeline+" ORDER BY id")
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (afterRow, error) {
		var a afterRow
		err := r.Scan(&a.run, &a.token, &a.worker, &a.started, &a.finished, &a.seen)
		return a, err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// bySlot indexes rows by slot, reporting a slot written twice or more: a
// slot runs at most once across the fleet, downstream of a gate too.
func bySlot(t *testing.T, pipeline string, rows []afterRow) map[int64]afterRow {
	t.Helper()
	out := make(map[int64]afterRow, len(rows))
	for _, r := range rows {
		if prev, dup := out[r.run]; dup {
			t.Errorf("%s: slot %d written twice: by %s (token %d) and by %s (token %d)", pipeline, r.run, prev.worker, prev.token, r.worker, r.token)
			continue
		}
		out[r.run] = r
	}
	return out
}

// checkLoadFollowedExtract reports every load row whose slot extract had
// not written and committed when load's source statement began: no
// extract row of the slot, none visible to load's statement, or one
// inserted after load's statement began.
func checkLoadFollowedExtract(t *testing.T, extract, load map[int64]afterRow) {
	t.Helper()
	for _, s := range sortedSlots(load) {
		l := load[s]
		e, ok := extract[s]
		switch {
		case !ok:
			t.Errorf("load ran slot %s (by %s at %s), which extract never wrote: the gate let through a slot its upstream had not completed",
				slotText(s), l.worker, l.started.Format("15:04:05.000"))
		case l.seen != 1:
			t.Errorf("load ran slot %s (by %s at %s) seeing %d extract rows of it; extract's (by %s) was inserted at %s: load started before its upstream's write of the slot committed",
				slotText(s), l.worker, l.started.Format("15:04:05.000"), l.seen, e.worker, e.finished.Format("15:04:05.000"))
		case !e.finished.Before(l.started):
			t.Errorf("load ran slot %s at %s, not after extract's insert of it at %s", slotText(s), l.started.Format("15:04:05.000"), e.finished.Format("15:04:05.000"))
		}
	}
}

// sortedSlots returns the slots of rows in order.
func sortedSlots(rows map[int64]afterRow) []int64 {
	out := make([]int64, 0, len(rows))
	for s := range rows {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// slotText is slot (Unix seconds) as RFC 3339 UTC, as the skip reasons
// name it.
func slotText(slot int64) string { return time.Unix(slot, 0).UTC().Format(time.RFC3339) }

// TestAfterFleetRunsLoadOnlyAfterExtractCommittedTheSlot: three replicas
// of agora worker --config on one Redis and one PostgreSQL, extract every
// second taking 0.2 to 0.6 s, load after extract. One replica is SIGKILLed
// while it runs extract (and started again), another is SIGSTOPped past
// the lease TTL. From the database: load wrote no slot before extract's
// write of it had committed (its own statement read extract's row), no
// slot of either pipeline was written twice, load ran at least half of
// extract's slots, and each slot extract wrote but load did not is a
// skip some replica logged for that slot, or lies in a fault's window.
func TestAfterFleetRunsLoadOnlyAfterExtractCommittedTheSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 30 seconds")
	}
	f := startAfterFleet(t)
	waitRows(t, f.conn, "load", 3, 30*time.Second, f.procs...)

	// Kill the replica that is running extract: that slot's run never
	// ends, so load must skip it (no replica re-runs it).
	victim, killedSlot := f.runningExtract(10 * time.Second)
	if victim < 0 {
		t.Fatal("no replica seen running extract within 10 s")
	}
	killed, killedAt := f.names[slices.Index(f.all, f.procs[victim])], time.Now()
	f.procs[victim].signal(t, syscall.SIGKILL)
	f.procs[victim].wait(t, 10*time.Second)
	f.procs[victim] = f.start(killed + "-again")
	waitRows(t, f.conn, "load", int64(len(f.rows("load"))+6), 30*time.Second, f.procs...)

	// Stop another past the lease TTL, preferably while it runs extract.
	sleeper := (victim + 1) % len(f.procs)
	if i, _ := f.runningExtract(3 * time.Second); i >= 0 && i != victim {
		sleeper = i
	}
	stoppedName, stoppedAt := f.names[slices.Index(f.all, f.procs[sleeper])], time.Now()
	f.procs[sleeper].signal(t, syscall.SIGSTOP)
	time.Sleep(afterStopFor)
	f.procs[sleeper].signal(t, syscall.SIGCONT)
	resumedAt := time.Now()
	waitRows(t, f.conn, "load", int64(len(f.rows("load"))+6), 30*time.Second, f.procs...)
	stoppedFleetAt := f.stop()

	extract := bySlot(t, "extract", f.rows("extract"))
	load := bySlot(t, "load", f.rows("load"))
	if len(extract) == 0 {
		t.Fatalf("extract wrote nothing, and load wrote %d slots", len(load))
	}
	checkLoadFollowedExtract(t, extract, load)

	// A slot extract wrote and load did not is explained by a skip a
	// replica logged for it, by a fault (the slot running at the fault,
	// those a dead or stopped holder's lease kept for the TTL, the
	// replica's return), or by the end: load would start it at the next
	// slot, after SIGINT.
	skips := f.upstreamSkips()
	inWindow := func(s int64, from, to time.Time) bool { return s >= from.Unix()-2 && s <= to.Unix()+2 }
	var lacking, skipped, byKill, byStop, atEnd int
	for _, s := range sortedSlots(extract) {
		if _, ran := load[s]; ran {
			continue
		}
		lacking++
		logged := slices.ContainsFunc(skips, func(m map[int64]afterLog) bool { _, ok := m[s]; return ok })
		switch {
		case logged:
			skipped++
		case inWindow(s, killedAt, killedAt.Add(afterLeaseTTL)):
			byKill++
		case inWindow(s, stoppedAt, resumedAt.Add(afterLeaseTTL)):
			byStop++
		case s >= stoppedFleetAt.Unix()-1:
			atEnd++
		default:
			t.Errorf("extract wrote slot %s (by %s), load did not, and no replica logged a skip of it; no fault was near", slotText(s), extract[s].worker)
		}
	}
	// The run the kill interrupted never completed its slot (unless it
	// got as far as recording it, and then its row is there): the live
	// replicas waited for it and skipped it.
	if _, written := extract[killedSlot]; !written && mergedSkips(skips)[killedSlot] == 0 {
		t.Errorf("extract's run of slot %s was killed, and no replica logged load's skip of that slot", slotText(killedSlot))
	}
	if len(load) < 10 || 2*len(load) < len(extract) {
		t.Errorf("load ran %d of extract's %d slots; want at least half (and 10): the gate should let a completed slot through", len(load), len(extract))
	}
	first, last := sortedSlots(extract)[0], sortedSlots(extract)[len(extract)-1]
	t.Logf("slots %s to %s: extract wrote %d, load ran %d, replicas logged %d slots as skipped for extract; of the %d load lacks: %d skipped and logged, %d in the kill window, %d in the stop window, %d at the end; %s killed at %s while running extract's slot %s (%d replicas logged load's skip of it), %s stopped %s at %s",
		slotText(first), slotText(last), len(extract), len(load), len(mergedSkips(skips)), lacking, skipped, byKill, byStop, atEnd,
		killed, killedAt.Format("15:04:05.000"), slotText(killedSlot), mergedSkips(skips)[killedSlot], stoppedName, afterStopFor, stoppedAt.Format("15:04:05.000"))
}

// skippedMetricRE reads load's upstream skips from /metrics.
var skippedMetricRE = regexp.MustCompile(`(?m)^agora_attempts_skipped_total\{pipeline="load",reason="upstream"\} (\d+)`)

// TestAfterFleetSkipsLoadWhileExtractIsPaused: the same fleet; "agora
// fleet pause extract --reason test" stops extract fleet-wide, so load
// waits for each slot and skips it: the replicas log the skip with the
// reason `upstream "extract" has not completed slot <RFC 3339>`, count it
// in /status and /metrics, and load writes nothing for those slots.
// After "fleet resume extract" load runs again.
func TestAfterFleetSkipsLoadWhileExtractIsPaused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 15 seconds")
	}
	f := startAfterFleet(t)
	waitRows(t, f.conn, "load", 2, 30*time.Second, f.procs...)
	addr := jsonHealthAddr(t, f.procs[0])

	f.fleet("pause", "extract", "--reason", "test")
	pausedAt := time.Now()
	// Each replica reads the pause flag within a second, and a run in
	// flight finishes: from two slots on, extract runs no more, and each
	// slot's wait ends at the next.
	firstPaused := pausedAt.Unix() + 2
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := 0
		for s := range mergedSkips(f.upstreamSkips()) {
			if s >= firstPaused {
				n++
			}
		}
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d slots of load logged as skipped within 20 s of pausing extract; want 3", n)
		}
		time.Sleep(50 * time.Millisecond)
	}

	var status struct {
		Pipelines []struct {
			PipelineID      string `json:"pipeline_id"`
			SkippedUpstream uint64 `json:"skipped_upstream"`
			LastSkipReason  string `json:"last_skip_reason"`
		} `json:"pipelines"`
	}
	getJSON(t, "http://"+addr+"/status", &status)
	metrics := getText(t, "http://"+addr+"/metrics")

	f.fleet("resume", "extract")
	resumedAt := time.Now()
	var after int64
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := f.conn.QueryRow(context.Background(), "SELECT count(*) FROM rows_load WHERE run > $1", resumedAt.Unix()).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if after > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("load wrote nothing within 20 s of resuming extract")
		}
	}
	f.stop()

	extract := bySlot(t, "extract", f.rows("extract"))
	load := bySlot(t, "load", f.rows("load"))
	checkLoadFollowedExtract(t, extract, load)

	skips := f.upstreamSkips()
	for i, m := range skips {
		if len(m) == 0 {
			t.Errorf("replica %s logged no skip of load while extract was paused", f.names[i])
		}
		for s, e := range m {
			if want := `upstream "extract" has not completed slot ` + slotText(s); e.Reason != want || e.Upstream != "extract" || e.Level != "WARN" {
				t.Errorf("replica %s skipped slot %d at level %s, upstream %q, reason %q; want WARN, extract and %q", f.names[i], s, e.Level, e.Upstream, e.Reason, want)
			}
		}
	}
	merged := mergedSkips(skips)
	var paused []int64
	for s := firstPaused; s < resumedAt.Unix(); s++ {
		paused = append(paused, s)
		if _, ok := extract[s]; ok {
			t.Errorf("extract wrote slot %s while paused", slotText(s))
		}
		if _, ok := load[s]; ok {
			t.Errorf("load wrote slot %s while extract was paused", slotText(s))
		}
		if merged[s] == 0 {
			t.Errorf("no replica logged load's slot %s as skipped while extract was paused", slotText(s))
		}
	}

	var reported bool
	for _, p := range status.Pipelines {
		if p.PipelineID != "load" {
			continue
		}
		reported = true
		if p.SkippedUpstream == 0 || !strings.HasPrefix(p.LastSkipReason, `upstream "extract" has not completed slot `) {
			t.Errorf("/status of load: skipped_upstream %d, last_skip_reason %q; want skips for extract", p.SkippedUpstream, p.LastSkipReason)
		}
	}
	if !reported {
		t.Errorf("/status has no pipeline load: %+v", status)
	}
	if m := skippedMetricRE.FindStringSubmatch(metrics); m == nil || m[1] == "0" {
		t.Errorf("/metrics: want agora_attempts_skipped_total{pipeline=\"load\",reason=\"upstream\"} above 0; got %q", m)
	}
	t.Logf("extract paused %s to %s: slots %s to %s skipped (replicas logged %v skips each), load wrote %d slots, %d after the resume",
		pausedAt.Format("15:04:05.000"), resumedAt.Format("15:04:05.000"), slotText(paused[0]), slotText(paused[len(paused)-1]),
		skipCounts(skips), len(load), after)
}

// jsonHealthAddr is the health server's address from p's JSON log.
func jsonHealthAddr(t *testing.T, p *agoraProc) string {
	t.Helper()
	p.waitOutput(t, p.stderr, "health server listening", 30*time.Second)
	for _, l := range lines(p.stderr.String()) {
		var e struct{ Msg, Addr string }
		if json.Unmarshal([]byte(l), &e) == nil && e.Msg == "health server listening" {
			return "127.0.0.1:" + e.Addr[strings.LastIndex(e.Addr, ":")+1:]
		}
	}
	t.Fatalf("no health server address in the log:\n%s", p.stderr)
	return ""
}

// mergedSkips counts, per slot, the replicas that logged it as skipped.
func mergedSkips(skips []map[int64]afterLog) map[int64]int {
	out := map[int64]int{}
	for _, m := range skips {
		for s := range m {
			out[s]++
		}
	}
	return out
}

// skipCounts is how many slots each replica logged as skipped.
func skipCounts(skips []map[int64]afterLog) []int {
	out := make([]int, len(skips))
	for i, m := range skips {
		out[i] = len(m)
	}
	return out
}

// getJSON decodes the JSON body of a GET of url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(getText(t, url)), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// getText returns the body of a GET of url, failing unless it is 200.
func getText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	return string(body)
}
