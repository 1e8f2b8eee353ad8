package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/etl"
)

func TestBuiltinsIncludeTheDatabaseAndKafkaComponents(t *testing.T) {
	r := Builtins()
	for _, kind := range []etl.Kind{etl.KindSource, etl.KindSink} {
		for _, name := range []string{"kafka", "postgres", "sqlite"} {
			if !slices.Contains(r.Names(kind), name) {
				t.Errorf("no %s %q among %v", kind, name, r.Names(kind))
			}
		}
	}
}

const dbPipelines = `format = "agora/v1"

[pipelines.copy.source]
type = "sqlite"
path = "shop.db"
query = "SELECT id, total FROM orders WHERE updated_at > :last_slot_time"

[pipelines.copy.schedule]
mode = "every"
minutes = 5

[[pipelines.copy.sinks]]
type = "postgres"
url = "postgres://agora:secret@127.0.0.1/warehouse"
table = "orders"
mode = "upsert"
key = ["id"]

[[pipelines.copy.sinks]]
type = "sqlite"
path = "warehouse.db"
table = "orders"
create_table = true
`

func TestDatabaseComponentsCheckInConfigFiles(t *testing.T) {
	if _, err := config.Parse("pipelines.toml", []byte(dbPipelines), config.WithRegistry(Builtins())); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	bad := strings.Replace(dbPipelines, `mode = "upsert"`, `mode = "merge"`, 1)
	bad = strings.Replace(bad, ":last_slot_time", ":last_slot", 1)
	_, err := config.Parse("pipelines.toml", []byte(bad), config.WithRegistry(Builtins()))
	if err == nil {
		t.Fatal("bad mode and parameter accepted")
	}
	msg := err.Error()
	for _, want := range []string{"pipelines.toml:6:", "unknown parameter :last_slot", "pipelines.toml:16:", `"merge"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "secret") {
		t.Errorf("error shows the password:\n%s", msg)
	}
}

// TestSQLSinkOnUnknownFieldIsChecked: on_unknown_field gets a did-you-mean
// when misspelt, and a value other than "reject" or "ignore" is reported
// at its position, on both SQL sinks.
func TestSQLSinkOnUnknownFieldIsChecked(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.p]
source = { type = "iterable", records = [{ id = 1 }] }
schedule = { mode = "once" }
[[pipelines.p.sinks]]
type = "sqlite"
path = "w.db"
table = "events"
on_unknow_field = "ignore"
[[pipelines.p.sinks]]
type = "postgres"
url = "postgres://agora:secret@127.0.0.1/w"
table = "events"
on_unknown_field = "drop"
[[pipelines.p.sinks]]
type = "sqlite"
path = "w.db"
table = "events"
on_unknown_field = "ignore"
`
	_, err := config.Parse("s.toml", []byte(doc), config.WithRegistry(Builtins()))
	want := []string{
		`s.toml:9:1: pipelines.p.sinks[0]: unknown key "on_unknow_field" (did you mean "on_unknown_field"?)`,
		`s.toml:14:1: pipelines.p.sinks[1].on_unknown_field: must be "reject" or "ignore", not "drop"`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// TestSQLSinkSlotColumnIsChecked: mode = "replace" needs slot_column, which
// no other mode takes and which columns must not list; each problem is
// reported at its position, on both SQL sinks.
func TestSQLSinkSlotColumnIsChecked(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.p]
source = { type = "iterable", records = [{ id = 1 }] }
schedule = { mode = "cron", expr = "0 * * * *" }
[[pipelines.p.sinks]]
type = "sqlite"
path = "w.db"
table = "events"
mode = "replace"
[[pipelines.p.sinks]]
type = "postgres"
url = "postgres://agora:secret@127.0.0.1/w"
table = "events"
slot_column = "slot"
[[pipelines.p.sinks]]
type = "postgres"
url = "postgres://agora:secret@127.0.0.1/w"
table = "events"
mode = "replace"
columns = ["id", "slot"]
slot_column = "slot"
[[pipelines.p.sinks]]
type = "sqlite"
path = "w.db"
table = "events"
mode = "replace"
slot_colum = "slot"
[[pipelines.p.sinks]]
type = "sqlite"
path = "w.db"
table = "events"
mode = "replace"
slot_column = "slot"
`
	_, err := config.Parse("s.toml", []byte(doc), config.WithRegistry(Builtins()))
	want := []string{
		`s.toml:5:15: pipelines.p.sinks[0].slot_column: is required with mode = "replace": the column the sink writes each row's slot time to, by which a re-run of the slot deletes the rows it replaces`,
		`s.toml:14:1: pipelines.p.sinks[1].slot_column: is only used with mode = "replace"`,
		`s.toml:21:1: pipelines.p.sinks[2].slot_column: "slot" is also listed in columns: the sink writes the run's slot time there itself, so no record field may go to it`,
		`s.toml:27:1: pipelines.p.sinks[3]: unknown key "slot_colum" (did you mean "slot_column"?)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}
