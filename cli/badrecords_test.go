package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/pgtest"
	"github.com/agora-etl/agora/internal/redistest"
)

// poisonConfig is the repro: a continuous redis_stream pipeline
// whose map gives +Inf for the entry with b = 0, a file sink and a file
// dead-letter queue in a folder that does not exist yet.
const poisonConfig = `format = "agora/v1"

[pipelines.ratios]
batch_size = 100
source = { type = "redis_stream", url = "${REDIS_URL}", stream = "in", group = "g", block = "300ms" }
schedule = { mode = "continuous" }
dlq = { type = "file", path = "dead/letters.jsonl" }

[[pipelines.ratios.transforms]]
type = "map"
fields = { ratio = "double(record.a) / double(record.b)" }

[[pipelines.ratios.sinks]]
type = "file"
path = "out.jsonl"
`

// addPoisonStream adds 1,000 entries {id, a, b = 1} to stream "in", but
// b = 0 for id 600.
func addPoisonStream(t *testing.T, c *redis.Client) {
	t.Helper()
	pipe := c.Pipeline()
	for i := range 1000 {
		b := 1
		if i == 600 {
			b = 0
		}
		pipe.XAdd(context.Background(), &redis.XAddArgs{Stream: "in", Values: []any{"data", fmt.Sprintf(`{"id":%d,"a":%d,"b":%d}`, i, i, b)}})
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// jsonLines decodes a JSON-lines file; a missing file has none.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// checkPoisonDrained checks the repro's outcome: 999 records delivered
// once, the poison one dead-lettered with the source's record, nothing
// pending.
func checkPoisonDrained(t *testing.T, dir string, c *redis.Client) {
	t.Helper()
	ids := map[float64]int{}
	lines := jsonLines(t, filepath.Join(dir, "out.jsonl"))
	for _, l := range lines {
		ids[l["id"].(float64)]++
	}
	if len(lines) != 999 || len(ids) != 999 || ids[600] != 0 {
		t.Fatalf("%d lines for %d ids (id 600: %d), want 999 distinct, without 600", len(lines), len(ids), ids[600])
	}
	dead := jsonLines(t, filepath.Join(dir, "dead", "letters.jsonl"))
	if len(dead) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dead))
	}
	if rec, _ := dead[0]["record"].(map[string]any); rec["id"] != 600.0 || rec["b"] != 0.0 {
		t.Fatalf("dead letter %v, want the source's record of id 600", dead[0])
	}
	p, err := c.XPending(context.Background(), "in", "g").Result()
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != 0 {
		t.Fatalf("%d entries pending, want none", p.Count)
	}
}

func TestRunDrainsAStreamPastAPoisonRecord(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	addPoisonStream(t, c)
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", poisonConfig)
	code, _, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL=", "REDIS_URL=" + srv.URL()}, "run", "--config", path)
	if code != 0 {
		t.Fatalf("agora run: exit %d\n%s", code, stderr)
	}
	checkPoisonDrained(t, dir, c)
}

func TestWorkerDrainsAStreamPastAPoisonRecord(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	addPoisonStream(t, c)
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", poisonConfig)
	p := startAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL=", "REDIS_URL=" + srv.URL()}, "worker", "--config", path, "-health-port", "0")
	deadline := time.Now().Add(60 * time.Second)
	for len(jsonLines(t, filepath.Join(dir, "out.jsonl"))) < 999 || len(jsonLines(t, filepath.Join(dir, "dead", "letters.jsonl"))) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the stream was not drained within 60 s\n%s", p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.signal(t, syscall.SIGINT)
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGINT\n%s", code, p.stderr)
	}
	checkPoisonDrained(t, dir, c)
}

// pgDLQConfig: a PostgreSQL sink in insert mode whose table refuses one
// record, and a file dead-letter queue at ${DLQ}.
const pgDLQConfig = `format = "agora/v1"

[pipelines.orders]
source = { type = "iterable", records = [{ id = 1, qty = 1 }, { id = 2, qty = -1 }, { id = 3, qty = 3 }] }
schedule = { mode = "every", hours = 1 }
dlq = { type = "file", path = "${DLQ}" }

[[pipelines.orders.sinks]]
type = "postgres"
url = "${PG_URL}"
table = "orders"
allow_unfenced = true
`

// The repro: a dead-letter queue whose folder does not exist used
// to fail the run after PostgreSQL had committed, and the retry inserted
// the rows again. The folder is now created when the run opens its sinks;
// and a folder that cannot be created is refused before anything runs,
// with the path's position. Through agora run and agora worker.
func TestADLQFolderIsCheckedBeforePostgresWrites(t *testing.T) {
	pg := pgtest.Start(t)
	for _, cmd := range []string{"run", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			url := pg.NewDatabase(t)
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, "CREATE TABLE orders (id bigint NOT NULL, qty bigint CHECK (qty >= 0))"); err != nil {
				t.Fatal(err)
			}
			rows := func() int64 {
				var n int64
				if err := conn.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			dir := t.TempDir()
			path := writeConfig(t, dir, "p.toml", pgDLQConfig)
			agora := func(dlq string) (int, string) {
				env := []string{"AGORA_DISTRIBUTED_REDIS_URL=", "PG_URL=" + url, "DLQ=" + dlq}
				if cmd == "run" {
					code, _, stderr := runAgora(t, dir, env, "run", "--config", path)
					return code, stderr
				}
				p := startAgora(t, dir, env, "worker", "--config", path, "-health-port", "0")
				deadline := time.Now().Add(30 * time.Second)
				for (rows() < 2 || len(jsonLines(t, dlq)) < 1) && running(p) {
					if time.Now().After(deadline) {
						t.Fatalf("nothing happened within 30 s\n%s", p.stderr)
					}
					time.Sleep(50 * time.Millisecond)
				}
				if running(p) {
					p.signal(t, syscall.SIGINT)
				}
				return p.wait(t, 20*time.Second), p.stderr.String()
			}

			// A file where the folder should be: refused at load, nothing
			// written anywhere.
			if err := os.WriteFile(filepath.Join(dir, "blocker"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stderr := agora(filepath.Join(dir, "blocker", "dead.jsonl"))
			if code == 0 || !strings.Contains(stderr, path+":6:") || !strings.Contains(stderr, "is a file, not a folder") {
				t.Fatalf("blocked folder: exit %d, want a failure at %s:6\n%s", code, path, stderr)
			}
			if n := rows(); n != 0 {
				t.Fatalf("a run that could not open its dead-letter queue wrote %d rows", n)
			}

			// A missing folder: created; the rows land once, the refused
			// record in the new folder.
			dlq := filepath.Join(dir, "missing", "dead.jsonl")
			if code, stderr := agora(dlq); code != 0 {
				t.Fatalf("missing folder: exit %d\n%s", code, stderr)
			}
			if n := rows(); n != 2 {
				t.Fatalf("%d rows, want 2 (ids 1 and 3, once)", n)
			}
			if dead := jsonLines(t, dlq); len(dead) != 1 || dead[0]["record"].(map[string]any)["id"] != 2.0 {
				t.Fatalf("dead letters %v, want the record of id 2", dead)
			}
		})
	}
}

// running reports whether p has not exited yet.
func running(p *agoraProc) bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}
