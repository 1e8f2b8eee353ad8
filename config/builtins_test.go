package config

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// TestExampleWithTheBuiltinComponents loads the reference's example file,
// unchanged, with the default registry and runs its pipeline once: {"id":1}
// on standard output.
func TestExampleWithTheBuiltinComponents(t *testing.T) {
	f, err := Load("testdata/example.toml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	pool, err := f.Pool(runtime.WithHealthAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	if st := pool.Status().Pipelines; len(st) != 1 || st[0].PipelineID != "orders" || st[0].Schedule != runtime.Every(15*time.Minute).String() {
		t.Fatalf("pool pipelines = %+v", st)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w // the stdout sink takes os.Stdout when a run builds it
	pl, err := f.Pipelines[0].Factory()(context.Background())
	os.Stdout = stdout
	if err != nil {
		t.Fatalf("Factory: %v", err)
	}
	runErr := pl.Run(context.Background())
	w.Close()
	got, _ := io.ReadAll(r)
	if runErr != nil {
		t.Fatalf("Run: %v", runErr)
	}
	if string(got) != "{\"id\":1}\n" {
		t.Errorf("stdout = %q, want {\"id\":1}", got)
	}
}

// TestBuiltinSchemasAreChecked shows that component tables are checked
// against the built-in components' own configuration structs.
func TestBuiltinSchemasAreChecked(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.p]
source = { type = "redis_stream", url = "redis://:pw@127.0.0.1:1/0", stream = "s", group = "g", block = 5, strat = "0" }
sinks = [{ type = "file", path = "out.jsonl", fromat = "jsonl" }]
schedule = { mode = "continuous" }
`
	_, err := Parse("b.toml", []byte(doc))
	want := []string{
		`b.toml:3:105: pipelines.p.source.block: want a duration string such as "5s", got an integer`,
		`b.toml:3:108: pipelines.p.source: unknown key "strat" (did you mean "start"?)`,
		`b.toml:4:47: pipelines.p.sinks[0]: unknown key "fromat" (did you mean "format"?)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// TestFileSourceKeysAreChecked: the file source's read-once keys
// (after_read, move_to, state) and null_if get a did-you-mean when
// misspelt, and their values are checked where they are written.
func TestFileSourceKeysAreChecked(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.p]
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
[pipelines.p.source]
type = "file"
path = "in/*.csv"
aftr_read = "move"
move_too = "done"
stat = "none"
nul_if = [""]
[pipelines.q]
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
source = { type = "file", path = "in/a.jsonl", after_read = "mvoe", null_if = [""] }
`
	_, err := Parse("f.toml", []byte(doc))
	want := []string{
		`f.toml:8:1: pipelines.p.source: unknown key "aftr_read" (did you mean "after_read"?)`,
		`f.toml:9:1: pipelines.p.source: unknown key "move_too" (did you mean "move_to"?)`,
		`f.toml:10:1: pipelines.p.source: unknown key "stat" (did you mean "state"?)`,
		`f.toml:11:1: pipelines.p.source: unknown key "nul_if" (did you mean "null_if"?)`,
		`f.toml:15:48: pipelines.q.source.after_read: "mvoe" is not an after_read; use "keep", "move" or "delete"`,
		`f.toml:15:69: pipelines.q.source.null_if: is only used with CSV files, and format is "jsonl" (JSON lines write null themselves)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
	doc = strings.NewReplacer("aftr_read", "after_read", "move_too", "move_to", `stat = "none"`, `state = "st"`, "nul_if", "null_if").Replace(doc)
	_, err = Parse("f.toml", []byte(doc))
	want = want[4:]
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// Rule: the default registry is the complete one: etl's light set and the
// kafka, postgres and sqlite components, so a file naming them loads
// without WithRegistry.
func TestDefaultRegistryHasEveryBuiltinComponent(t *testing.T) {
	r := DefaultRegistry()
	for _, kind := range []etl.Kind{etl.KindSource, etl.KindSink} {
		want := append(etl.Builtins().Names(kind), "kafka", "postgres", "sqlite")
		for _, name := range want {
			if !slices.Contains(r.Names(kind), name) {
				t.Errorf("no %s %q among %v", kind, name, r.Names(kind))
			}
		}
	}
	if slices.Contains(etl.Builtins().Names(etl.KindSink), "postgres") {
		t.Error("etl.Builtins has the postgres sink: etl would link a driver")
	}
	if _, err := Parse("pipelines.toml", []byte(`format = "agora/v1"

[pipelines.copy.source]
type = "sqlite"
path = "shop.db"
query = "SELECT id FROM orders"

[pipelines.copy.schedule]
mode = "once"

[[pipelines.copy.sinks]]
type = "stdout"
`)); err != nil {
		t.Fatalf("a sqlite source without WithRegistry: %v", err)
	}
}
