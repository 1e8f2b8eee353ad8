package cli_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/internal/pgtest"
	"github.com/agora-etl/agora/internal/redistest"
)

// A config-only pipeline: each cron second, the postgres source selects the
// run's slot and token, and two postgres sinks upsert the slot's row and
// append to a log of accepted writes.
const pgFleetConfig = `format = "agora/v1"

[pipelines.slots.source]
type = "postgres"
url = "${PG_URL}"
query = "SELECT :run_number::bigint AS slot, :fencing_token::bigint AS token, '${REPLICA}'::text AS worker"

[pipelines.slots.schedule]
mode = "cron"
expr = "* * * * * *"

[[pipelines.slots.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "slots"
mode = "upsert"
key = ["slot"]

[[pipelines.slots.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "writes"
columns = ["slot", "token", "worker"]
`

// Three replicas of agora worker --config share a Redis and write into one
// PostgreSQL; one is stopped past the lease TTL and resumed, another is
// killed and restarted. Each slot has one row, and no write with a lower
// token is ever accepted after one with a higher token.
func TestConfigWorkersFenceTheirPostgresWrites(t *testing.T) {
	srv := redistest.Start(t)
	pg := pgtest.Start(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE slots (slot bigint PRIMARY KEY, token bigint NOT NULL, worker text NOT NULL)",
		"CREATE TABLE writes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, slot bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", pgFleetConfig)
	start := func(name string) *agoraProc {
		return startAgora(t, dir, []string{
			"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL(),
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=1",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=250ms",
			"PG_URL=" + url, "REPLICA=" + name,
		}, "worker", "--config", path, "-log-format", "json", "-health-port", "0")
	}
	procs := []*agoraProc{start("r1"), start("r2"), start("r3")}
	count := func() int64 {
		var n int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM slots").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(20 * time.Second)
	for count() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	procs[0].signal(t, syscall.SIGSTOP)
	time.Sleep(2500 * time.Millisecond)
	procs[0].signal(t, syscall.SIGCONT)
	procs[1].signal(t, syscall.SIGKILL)
	procs[1].wait(t, 10*time.Second)
	procs[1] = start("r2b")
	// A slot whose run was killed between its two sinks' commits has its
	// upserted row and no log row until a replica re-runs it (the dead
	// holder's slot is re-run first): wait for that too, on a loaded
	// machine it can take a few slots.
	unlogged := func() int64 {
		var n int64
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM slots s WHERE NOT EXISTS
			(SELECT 1 FROM writes w WHERE w.slot = s.slot AND w.token = s.token)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	for (count() < before+2 || unlogged() != 0) && time.Now().Before(deadline.Add(30*time.Second)) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range procs {
		p.signal(t, syscall.SIGINT)
	}
	for _, p := range procs {
		p.wait(t, 20*time.Second)
	}

	rows, err := conn.Query(ctx, "SELECT token FROM writes ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(tokens) {
		t.Fatalf("a write with a lower token was accepted after a higher one: %v", tokens)
	}
	var slots, distinct, bad int64
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM slots), (SELECT count(DISTINCT slot) FROM writes),
		(SELECT count(*) FROM slots s WHERE NOT EXISTS (SELECT 1 FROM writes w WHERE w.slot = s.slot AND w.token = s.token))`).Scan(&slots, &distinct, &bad); err != nil {
		t.Fatal(err)
	}
	if slots < 4 {
		t.Fatalf("only %d slots written", slots)
	}
	if bad != 0 {
		t.Fatalf("%d slot rows carry a token the log never accepted", bad)
	}
	t.Logf("%d slots, %d accepted writes over %d slots", slots, len(tokens), distinct)
}
