package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/internal/pgtest"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// Two pipelines on an every-second cron schedule. Each run's source names
// its slot and token in three rows (n = 1, 2, 3) after sleeping 0.3 s, so a
// run lasts long enough to be killed in, and its three rows are one batch
// (batch_size 500): one transaction. bf inserts into rows_bf; bfu upserts
// into rows_bfu by (slot, n), which --reprocess accepts.
const backfillFleetConfig = `format = "agora/v1"

[pipelines.bf]
source = { type = "postgres", url = "${PG_URL}", query = "SELECT :run_number::bigint AS slot, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker, g AS n FROM generate_series(1, 3) AS g, pg_sleep(0.3)" }
schedule = { mode = "cron", expr = "* * * * * *" }

[[pipelines.bf.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "rows_bf"
columns = ["slot", "token", "worker", "n"]

[pipelines.bfu]
source = { type = "postgres", url = "${PG_URL}", query = "SELECT :run_number::bigint AS slot, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker, g AS n FROM generate_series(1, 3) AS g, pg_sleep(0.3)" }
schedule = { mode = "cron", expr = "* * * * * *" }

[[pipelines.bfu.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "rows_bfu"
mode = "upsert"
key = ["slot", "n"]
`

// backfillFleet is three replicas of agora worker --config running
// backfillFleetConfig on a real Redis and PostgreSQL.
type backfillFleet struct {
	t     *testing.T
	srv   *redistest.Server
	dir   string
	path  string
	pgURL string
	conn  *pgx.Conn
	procs []*agoraProc // the live replicas
	all   []*agoraProc // every process started, killed ones too
	names []string     // all's replica names
}

func startBackfillFleet(t *testing.T) *backfillFleet {
	t.Helper()
	f := &backfillFleet{t: t, srv: redistest.Start(t), dir: t.TempDir()}
	f.pgURL = pgtest.Start(t).NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	f.conn = conn
	for _, q := range []string{
		"CREATE TABLE rows_bf (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, slot bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL, n int NOT NULL)",
		"CREATE TABLE rows_bfu (slot bigint NOT NULL, n int NOT NULL, token bigint NOT NULL, worker text NOT NULL, PRIMARY KEY (slot, n))",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	f.path = writeConfig(t, f.dir, "pipelines.toml", backfillFleetConfig)
	for _, name := range []string{"r1", "r2", "r3"} {
		f.procs = append(f.procs, f.start(name))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range f.all {
				t.Logf("process %d (%s, exited: %v): its backfill lines, warnings and errors:\n%s", i+1, f.names[i], p.exited(), backfillLines(p.stderr.String()))
			}
		}
	})
	return f
}

// start starts a replica named name: a slot lease of 2 s, so a killed
// replica's backfill slot is handed out again 2 s later.
func (f *backfillFleet) start(name string) *agoraProc {
	p := startAgora(f.t, f.dir, []string{
		"AGORA_DISTRIBUTED_REDIS_URL=" + f.srv.URL(),
		"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=2",
		"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=500ms",
		"PG_URL=" + f.pgURL, "REPLICA=" + name,
	}, "worker", "--config", f.path, "-log-format", "json", "-health-port", "0")
	f.all = append(f.all, p)
	f.names = append(f.names, name)
	return p
}

// fleet runs agora fleet args, failing the test unless it exits 0.
func (f *backfillFleet) fleet(args ...string) string {
	f.t.Helper()
	code, out, errOut := runAgora(f.t, f.dir, []string{"AGORA_DISTRIBUTED_REDIS_URL=" + f.srv.URL()}, append([]string{"fleet"}, args...)...)
	if code != 0 {
		f.t.Fatalf("agora fleet %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// startBackfill starts a backfill of pipeline over slots [from, to), by
// the CLI as a user would, and returns its id.
func (f *backfillFleet) startBackfill(pipeline string, from, to time.Time, extra ...string) string {
	f.t.Helper()
	args := append([]string{"backfill", pipeline, "--from", from.UTC().Format(time.RFC3339), "--to", to.UTC().Format(time.RFC3339), "--json"}, extra...)
	var p distributed.BackfillProgress
	if out := f.fleet(args...); json.Unmarshal([]byte(out), &p) != nil || p.ID == "" {
		f.t.Fatalf("agora fleet %s printed no backfill:\n%s", strings.Join(args, " "), out)
	}
	return p.ID
}

// status reads pipeline's backfill with fleet backfill --status --json;
// false when the command fails (Redis restarting, the backfill not yet
// written back).
func (f *backfillFleet) status(pipeline string) (distributed.BackfillProgress, string, bool) {
	code, out, errOut := runAgora(f.t, f.dir, []string{"AGORA_DISTRIBUTED_REDIS_URL=" + f.srv.URL()}, "fleet", "backfill", pipeline, "--status", "--json")
	var p distributed.BackfillProgress
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
		return p, fmt.Sprintf("exit %d: %s%s", code, out, errOut), false
	}
	return p, out, true
}

// waitBackfill waits until pipeline's backfill id is done, at most d, and
// returns its progress. Failed and cancelled are failures.
func (f *backfillFleet) waitBackfill(pipeline, id string, d time.Duration) distributed.BackfillProgress {
	f.t.Helper()
	deadline := time.Now().Add(d)
	last := "nothing read"
	for {
		p, out, ok := f.status(pipeline)
		if ok {
			last = out
			if p.ID == id {
				switch p.State {
				case distributed.BackfillDone:
					return p
				case distributed.BackfillFailed, distributed.BackfillCanceled:
					f.t.Fatalf("the backfill %s of %s ended %s:\n%s", id, pipeline, p.State, out)
				}
			}
		} else if !strings.Contains(last, "exit") {
			last = out + " (after " + last + ")"
		} else {
			last = out
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the backfill %s of %s not done within %s; last fleet backfill --status --json: %s", id, pipeline, d, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bfRun is one backfill slot run, from a replica's log.
type bfRun struct {
	proc         int // index in all
	slot         int64
	started      bool
	finished     bool // "backfill slot finished": its run succeeded
	interrupted  bool // lease lost or the pool stopping: the slot is handed out again
	alreadyDone  bool // skipped: the run history or the ledger said the slot had completed
	failed       bool
	finishedText string
}

// backfillRuns returns pipeline's backfill slot runs by token, from the
// logs of every process started.
func (f *backfillFleet) backfillRuns(pipeline string) map[int64]*bfRun {
	out := map[int64]*bfRun{}
	for i, p := range f.all {
		for _, l := range lines(p.stderr.String()) {
			var e runLog
			if json.Unmarshal([]byte(l), &e) != nil || e.Pipeline != pipeline || !strings.HasPrefix(e.Msg, "backfill slot") {
				continue
			}
			r := out[e.Token]
			if r == nil {
				r = &bfRun{proc: i, slot: e.Run}
				out[e.Token] = r
			}
			switch {
			case e.Msg == "backfill slot started":
				r.started = true
			case e.Msg == "backfill slot finished":
				r.finished, r.finishedText = true, l
			case strings.HasPrefix(e.Msg, "backfill slot interrupted"):
				r.interrupted = true
			case strings.HasPrefix(e.Msg, "backfill slot already completed"):
				r.alreadyDone = true
			case e.Msg == "backfill slot failed":
				r.failed = true
			}
		}
	}
	return out
}

// runningBackfillSlot waits until a live replica runs a slot of pipeline's
// backfill, and returns its index in f.procs, the slot and the token; -1
// when none is seen within timeout.
func (f *backfillFleet) runningBackfillSlot(pipeline string, timeout time.Duration) (int, int64, int64) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for tok, r := range f.backfillRuns(pipeline) {
			if r.started && !r.finished && !r.interrupted && !r.alreadyDone && !r.failed {
				if i := slices.Index(f.procs, f.all[r.proc]); i >= 0 {
					return i, r.slot, tok
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return -1, 0, 0
}

// ledgerRow is a slot's row of agora_slots.
type ledgerRow struct {
	token     int64
	completed bool
}

// ledger reads agora_slots for resource, by slot.
func (f *backfillFleet) ledger(resource string) map[int64]ledgerRow {
	f.t.Helper()
	rows, err := f.conn.Query(context.Background(), "SELECT slot, token, completed FROM agora_slots WHERE resource = $1", resource)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[int64]ledgerRow{}
	for rows.Next() {
		var s int64
		var r ledgerRow
		if err := rows.Scan(&s, &r.token, &r.completed); err != nil {
			f.t.Fatal(err)
		}
		out[s] = r
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// bfRow is a row of rows_bf or rows_bfu.
type bfRow struct {
	token  int64
	n      int
	worker string
}

// tableRows reads table by slot, in the order of the writes for rows_bf.
func (f *backfillFleet) tableRows(table string) map[int64][]bfRow {
	f.t.Helper()
	order := "slot, n"
	if table == "rows_bf" {
		order = "id"
	}
	rows, err := f.conn.Query(context.Background(), "SELECT slot, token, n, worker FROM "+table+" ORDER BY "+order)
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[int64][]bfRow{}
	for rows.Next() {
		var s int64
		var r bfRow
		if err := rows.Scan(&s, &r.token, &r.n, &r.worker); err != nil {
			f.t.Fatal(err)
		}
		out[s] = append(out[s], r)
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// waitScheduled waits until table has rows of a slot at or after from:
// the schedule runs.
func (f *backfillFleet) waitScheduled(table string, from time.Time, timeout time.Duration) {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var n int64
		if err := f.conn.QueryRow(context.Background(), "SELECT count(*) FROM "+table+" WHERE slot >= $1", from.Unix()).Scan(&n); err != nil {
			f.t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no scheduled slot of %s written within %s", table, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// faultLines counts the lines of every process saying that slot of
// pipeline's backfill was claimed again after its holder's lease expired,
// and that a replica wrote back pipeline's backfill Redis lost.
func (f *backfillFleet) faultLines(pipeline string, slot int64) (reclaimed, restored int) {
	for _, p := range f.all {
		for _, l := range lines(p.stderr.String()) {
			var e struct {
				Msg      string `json:"msg"`
				Pipeline string `json:"pipeline"`
				Slot     string `json:"slot"`
			}
			if json.Unmarshal([]byte(l), &e) != nil || e.Pipeline != pipeline {
				continue
			}
			switch {
			case strings.HasPrefix(e.Msg, "distributed: claimed a backfill slot whose earlier holder's lease expired") && e.Slot == slotText(slot):
				reclaimed++
			case strings.HasPrefix(e.Msg, "distributed: Redis lost a running backfill; wrote it back"):
				restored++
			}
		}
	}
	return reclaimed, restored
}

// backfillLines is the lines of a replica's log about backfills, or above
// INFO, at most the last 80, for a failure message.
func backfillLines(log string) string {
	var keep []string
	for _, l := range lines(log) {
		if strings.Contains(l, "backfill") || strings.Contains(l, "WARN") || strings.Contains(l, "ERROR") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 80 {
		keep = keep[len(keep)-80:]
	}
	return strings.Join(keep, "\n")
}

// checkSlotRows reports a slot of table whose rows are not exactly one
// run's n = 1..3, that run being the ledger's completed token
// want (0: any one token). Rows of another token are allowed only when
// runs says that run was interrupted (killed, or its lease lost when Redis
// restarted) before it completed the slot: insert mode keeps an
// interrupted run's committed batch (docs/backfill.md); they are returned.
func checkSlotRows(t *testing.T, table string, slot int64, rows []bfRow, want int64, runs map[int64]*bfRun, killed map[int64]bool) (kept int) {
	t.Helper()
	byToken := map[int64][]int{}
	for _, r := range rows {
		byToken[r.token] = append(byToken[r.token], r.n)
	}
	if want == 0 && len(byToken) == 1 {
		for tok := range byToken {
			want = tok
		}
	}
	ns := byToken[want]
	slices.Sort(ns)
	if !slices.Equal(ns, []int{1, 2, 3}) {
		t.Errorf("%s: slot %s (%d): the completing run (token %d) left rows n=%v; want n=[1 2 3] exactly once (all rows of the slot: %+v)",
			table, slotText(slot), slot, want, ns, rows)
	}
	for tok, ns := range byToken {
		if tok == want {
			continue
		}
		r := runs[tok]
		switch {
		case r != nil && !r.finished && (r.interrupted || killed[tok]):
			kept += len(ns)
			t.Logf("%s: slot %s: %d rows of token %d, a run interrupted before completing it (insert mode keeps its batch)", table, slotText(slot), len(ns), tok)
		default:
			t.Errorf("%s: slot %s (%d) written twice: by token %d (rows n=%v; its run as logged: %+v) and by the completing token %d",
				table, slotText(slot), slot, tok, ns, r, want)
		}
	}
	return kept
}

// TestConfigReplicasBackfillEachSlotOnce: three replicas of agora worker
// --config on a real Redis and PostgreSQL run bf and bfu every second.
// "agora fleet backfill bf" asks for 60 past slots, 4 at a time; while it
// runs, the replica running one of its slots is SIGKILLed (and a
// replacement started), and Redis restarts empty once. The backfill
// finishes ("--status --json" says done), and from the database: each of
// the 60 slots has its three rows exactly once, written by the run the
// ledger (agora_slots) shows completed; no slot before the fleet started
// and outside the range was written, no replica ran a backfill slot
// outside it, no slot was logged finished twice; the schedule wrote slots
// while the backfill ran. The same backfill again skips all 60 and writes
// nothing. bfu, backfilled beside it (20 slots, through the kill but
// done before the Redis restart) into an upsert sink, then
// backfilled again with --reprocess, has the same rows, under newer tokens
// the ledger shows completed.
func TestConfigReplicasBackfillEachSlotOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 30 seconds")
	}
	begin := time.Now()
	f := startBackfillFleet(t)
	fleetStart := time.Now()
	f.waitScheduled("rows_bf", fleetStart.Add(-time.Second), 30*time.Second)

	// 60 one-second slots ending 5 s before the fleet started: none of them
	// is the schedule's.
	const nSlots = 60
	to := time.Unix(fleetStart.Unix()-5, 0)
	from := to.Add(-nSlots * time.Second)
	ufrom := to.Add(-20 * time.Second)
	backfillAt := time.Now()
	id := f.startBackfill("bf", from, to, "--parallel", "4")
	uid := f.startBackfill("bfu", ufrom, to, "--parallel", "4")

	// Kill the replica running a slot of bf's backfill, and start another.
	victim, killedSlot, killedToken := f.runningBackfillSlot("bf", 15*time.Second)
	if victim < 0 {
		t.Fatal("no replica seen running a backfill slot of bf within 15 s of the backfill's start")
	}
	killedName := f.names[slices.Index(f.all, f.procs[victim])]
	f.procs[victim].signal(t, syscall.SIGKILL)
	f.procs[victim].wait(t, 10*time.Second)
	f.procs[victim] = f.start(killedName + "-again")

	// bfu's backfill, beside bf's and through the kill, ends before the
	// Redis restart: a finished backfill's progress is not written back
	// (only running ones are), so it is read now.
	pu := f.waitBackfill("bfu", uid, 30*time.Second)

	// Restart Redis empty once a third of bf's slots are finished, while
	// its backfill runs.
	var restartedAt time.Time
	var atRestart distributed.BackfillProgress
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		p, out, ok := f.status("bf")
		if ok && p.State != distributed.BackfillRunning {
			t.Fatalf("the backfill of bf ended before the Redis restart; the test needs it running longer:\n%s", out)
		}
		if ok && p.Done+p.Skipped+p.Failed >= nSlots/3 {
			atRestart = p
			restartedAt = time.Now()
			f.srv.Restart()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backfill of bf did not finish %d slots within 30 s; last --status: %s", nSlots/3, out)
		}
	}

	p := f.waitBackfill("bf", id, 45*time.Second)
	doneAt := time.Now()
	if p.Total != nSlots || p.Done+p.Skipped != nSlots || p.Failed != 0 || len(p.InFlight) != 0 {
		t.Errorf("the backfill of bf ended with %d slots: done %d, skipped %d, failed %d, in flight %d; want %d done or skipped (skipped: run again after the Redis restart and refused by the ledger)",
			p.Total, p.Done, p.Skipped, p.Failed, len(p.InFlight), nSlots)
	}

	// From the database.
	runs := f.backfillRuns("bf")
	killed := map[int64]bool{killedToken: true}
	for tok, r := range runs {
		if f.all[r.proc].exited() && slices.Index(f.procs, f.all[r.proc]) < 0 && !r.finished {
			killed[tok] = true
		}
	}
	rows := f.tableRows("rows_bf")
	ledger := f.ledger("rows_bf")
	var kept int
	for s := from.Unix(); s < to.Unix(); s++ {
		l, ok := ledger[s]
		switch {
		case !ok:
			t.Errorf("rows_bf: slot %s (%d) of the backfill has no row in agora_slots; its rows: %+v", slotText(s), s, rows[s])
			continue
		case !l.completed:
			t.Errorf("rows_bf: slot %s (%d) of the backfill is not completed in agora_slots (token %d); its rows: %+v", slotText(s), s, l.token, rows[s])
		}
		kept += checkSlotRows(t, "rows_bf", s, rows[s], l.token, runs, killed)
	}
	// Nothing outside the range before the fleet started: the backfill
	// wrote only its slots (the schedule's begin at fleetStart).
	for s, rs := range rows {
		if (s < from.Unix() || s >= to.Unix()) && s < fleetStart.Unix()-1 {
			t.Errorf("rows_bf: slot %s (%d), outside the backfill's range and before the fleet started, has rows: %+v", slotText(s), s, rs)
		}
	}
	for s := range ledger {
		if (s < from.Unix() || s >= to.Unix()) && s < fleetStart.Unix()-1 {
			t.Errorf("agora_slots: slot %s (%d) of rows_bf, outside the backfill's range and before the fleet started, is in the ledger", slotText(s), s)
		}
	}
	finishedBy := map[int64][]int64{}
	for tok, r := range runs {
		if r.slot < from.Unix() || r.slot >= to.Unix() {
			t.Errorf("%s ran slot %s (%d, token %d) of bf as a backfill slot, outside [%s, %s)", f.names[r.proc], slotText(r.slot), r.slot, tok, slotText(from.Unix()), slotText(to.Unix()))
		}
		if r.finished {
			finishedBy[r.slot] = append(finishedBy[r.slot], tok)
		}
	}
	for s, toks := range finishedBy {
		if len(toks) > 1 {
			t.Errorf("bf: backfill slot %s (%d) logged finished by %d runs (tokens %v): it completed more than once", slotText(s), s, len(toks), toks)
		}
		if l := ledger[s]; len(toks) == 1 && l.token != toks[0] {
			t.Errorf("bf: backfill slot %s (%d) logged finished by token %d, and the ledger names token %d", slotText(s), s, toks[0], l.token)
		}
	}
	// The faults did what the test is about: the killed run's slot was
	// handed out again, and Redis's loss of the backfill was repaired by a
	// replica writing it back.
	reclaimed, restored := f.faultLines("bf", killedSlot)
	if reclaimed == 0 {
		t.Errorf("no replica logged claiming slot %s of bf again after its holder %s was killed", slotText(killedSlot), killedName)
	}
	if restored == 0 {
		t.Errorf("no replica logged writing back the backfill of bf after Redis restarted empty")
	}
	if r := finishedBy[killedSlot]; len(r) != 1 || r[0] == killedToken {
		t.Errorf("bf: the killed run's slot %s was finished by tokens %v; want one run, not the killed one (%d)", slotText(killedSlot), r, killedToken)
	}
	// The schedule went on: slots that began while the backfill ran have
	// their rows, each one run's.
	var scheduled int
	for s, rs := range rows {
		if s < fleetStart.Unix()-1 {
			continue
		}
		checkSlotRows(t, "rows_bf", s, rs, 0, nil, nil)
		if s >= backfillAt.Unix() && s <= doneAt.Unix() {
			scheduled++
		}
	}
	if scheduled < 2 {
		t.Errorf("rows_bf: %d scheduled slots written between the backfill's start (%s) and its end (%s); want the schedule to keep running",
			scheduled, backfillAt.Format("15:04:05.000"), doneAt.Format("15:04:05.000"))
	}
	phase1 := time.Since(backfillAt)

	// The same backfill again: every slot completed, so all 60 are
	// skipped and nothing is written.
	before := rowsIn(rows, from.Unix(), to.Unix())
	againAt := time.Now()
	id2 := f.startBackfill("bf", from, to, "--parallel", "4")
	p2 := f.waitBackfill("bf", id2, 30*time.Second)
	if p2.Skipped != nSlots || p2.Done != 0 || p2.Failed != 0 {
		t.Errorf("the same backfill of bf again: done %d, skipped %d, failed %d; want all %d skipped", p2.Done, p2.Skipped, p2.Failed, nSlots)
	}
	after := rowsIn(f.tableRows("rows_bf"), from.Unix(), to.Unix())
	for s := from.Unix(); s < to.Unix(); s++ {
		if !slices.Equal(before[s], after[s]) {
			t.Errorf("rows_bf: the second backfill changed slot %s (%d): %+v, then %+v", slotText(s), s, before[s], after[s])
		}
	}
	ledger2 := f.ledger("rows_bf")
	for s := from.Unix(); s < to.Unix(); s++ {
		if ledger2[s] != ledger[s] {
			t.Errorf("agora_slots: the second backfill changed slot %s (%d) of rows_bf: %+v, then %+v", slotText(s), s, ledger[s], ledger2[s])
		}
	}
	phase2 := time.Since(againAt)

	// bfu: its first backfill ran beside bf's, through the kill.
	reprocessAt := time.Now()
	const uSlots = 20
	if pu.Done+pu.Skipped != uSlots || pu.Failed != 0 {
		t.Errorf("the backfill of bfu: done %d, skipped %d, failed %d; want %d done or skipped", pu.Done, pu.Skipped, pu.Failed, uSlots)
	}
	urows, uledger := f.tableRows("rows_bfu"), f.ledger("rows_bfu")
	for s := ufrom.Unix(); s < to.Unix(); s++ {
		if l := uledger[s]; !l.completed {
			t.Errorf("rows_bfu: slot %s (%d) of the backfill not completed in agora_slots: %+v", slotText(s), s, l)
			continue
		}
		checkSlotRows(t, "rows_bfu", s, urows[s], uledger[s].token, nil, nil)
	}
	// Again with --reprocess: every slot runs, replacing its rows.
	rid := f.startBackfill("bfu", ufrom, to, "--parallel", "4", "--reprocess")
	pr := f.waitBackfill("bfu", rid, 30*time.Second)
	if pr.Done != uSlots || pr.Skipped != 0 || pr.Failed != 0 {
		t.Errorf("the backfill of bfu with --reprocess: done %d, skipped %d, failed %d; want all %d done", pr.Done, pr.Skipped, pr.Failed, uSlots)
	}
	urows2, uledger2 := f.tableRows("rows_bfu"), f.ledger("rows_bfu")
	for s := ufrom.Unix(); s < to.Unix(); s++ {
		was, now := uledger[s], uledger2[s]
		if !now.completed || now.token <= was.token {
			t.Errorf("agora_slots: slot %s (%d) of rows_bfu after --reprocess: %+v; want completed, with a token above %d", slotText(s), s, now, was.token)
		}
		checkSlotRows(t, "rows_bfu", s, urows2[s], now.token, nil, nil)
		if len(urows2[s]) != len(urows[s]) {
			t.Errorf("rows_bfu: slot %s (%d) had %d rows, and %d after --reprocess", slotText(s), s, len(urows[s]), len(urows2[s]))
		}
	}
	if n := len(rowsIn(urows2, ufrom.Unix(), to.Unix())); n != uSlots {
		t.Errorf("rows_bfu: %d slots in the range after --reprocess; want %d", n, uSlots)
	}
	phase3 := time.Since(reprocessAt)

	t.Logf("bf: 60 slots backfilled in %s (done %d, skipped %d after the restart; %d rows of interrupted runs kept), %d scheduled slots meanwhile; %s killed running slot %s (token %d); Redis restarted empty %s after the start, at %d of 60 finished; the same backfill again skipped all in %s; bfu: 20 slots, then --reprocess in %s; %s in all",
		phase1.Round(time.Millisecond), p.Done, p.Skipped, kept, scheduled, killedName, slotText(killedSlot), killedToken,
		restartedAt.Sub(backfillAt).Round(time.Millisecond), atRestart.Done+atRestart.Skipped+atRestart.Failed,
		phase2.Round(time.Millisecond), phase3.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
}

// rowsIn is the rows of the slots in [from, to), each slot's as the
// strings "token/n/worker", sorted.
func rowsIn(rows map[int64][]bfRow, from, to int64) map[int64][]string {
	out := map[int64][]string{}
	for s, rs := range rows {
		if s < from || s >= to {
			continue
		}
		for _, r := range rs {
			out[s] = append(out[s], strconv.FormatInt(r.token, 10)+"/"+strconv.Itoa(r.n)+"/"+r.worker)
		}
		slices.Sort(out[s])
	}
	return out
}
