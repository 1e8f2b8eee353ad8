package config

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/sqlite"
	"github.com/agora-etl/agora/internal/syncbuf"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/metrics"
)

// lockedBuffer collects logs written from several goroutines.
type lockedBuffer = syncbuf.Buffer

// TestEveryRecordIsAccountedFor runs a config file's pipeline in a pool:
// of five records read, a filter leaves two out, the SQLite sink rejects
// one whose field the table lacks (it goes to the dead-letter queue alone)
// and writes the other two. The run's log line and the /metrics counters
// both say in = out + dead_lettered + filtered: 5 = 2 + 1 + 2.
func TestEveryRecordIsAccountedFor(t *testing.T) {
	dir := t.TempDir()
	lines := `{"id":1,"kind":"a"}
{"id":2,"kind":"skip"}
{"id":3,"kind":"a","extra":"x"}
{"id":4,"kind":"b"}
{"id":5,"kind":"skip"}
`
	if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(filepath.Join(dir, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT)"); err != nil {
		t.Fatal(err)
	}
	doc := `format = "agora/v1"
[pipelines.acct]
source = { type = "file", path = "in.jsonl" }
schedule = { mode = "once" }
dlq = { type = "file", path = "dead.jsonl" }
[[pipelines.acct.transforms]]
type = "filter"
expr = 'record.kind != "skip"'
[[pipelines.acct.sinks]]
type = "sqlite"
path = "w.db"
table = "events"
`
	file := filepath.Join(dir, "pipelines.toml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := etl.Builtins()
	sqlite.Register(reg)
	f, err := Load(file, WithRegistry(reg), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	mr := miniredis.RunT(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "redis://"+mr.Addr()+"/0")
	logs := &lockedBuffer{}
	pool, err := f.Pool(runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithSignalHandling(false),
		runtime.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	// A once pipeline: Run returns when its run is over.
	if err := pool.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	const counts = `"records_in":5,"records_out":2,"records_dead_lettered":1,"records_filtered":2`
	if !strings.Contains(logs.String(), counts) {
		t.Fatalf("no run log line with %s:\n%s", counts, logs.String())
	}
	fams, err := pool.Metrics().(*metrics.Metrics).Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, fam := range fams {
		if fam.GetName() != "agora_records_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["pipeline"] == "acct" {
				got[labels["direction"]] = m.GetCounter().GetValue()
			}
		}
	}
	if want := map[string]float64{"in": 5, "out": 2, "dead_lettered": 1, "filtered": 2}; !maps.Equal(got, want) {
		t.Errorf("agora_records_total = %v, want %v", got, want)
	}
	if got["in"] != got["out"]+got["dead_lettered"]+got["filtered"] {
		t.Errorf("in != out + dead_lettered + filtered: %v", got)
	}

	var written []string
	rows, err := db.Query("SELECT cast(id AS TEXT) || kind FROM events ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		written = append(written, s)
	}
	rows.Close()
	if strings.Join(written, ",") != "1a,4b" {
		t.Errorf("rows %v, want [1a 4b]", written)
	}
	dead, err := os.ReadFile(filepath.Join(dir, "dead.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(dead, []byte("\n")); n != 1 || !strings.Contains(string(dead), `table events has no column named \"extra\"`) {
		t.Errorf("dead letters (%d):\n%s", n, dead)
	}
}
