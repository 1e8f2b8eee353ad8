package config

import (
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/sqlite"
)

const fencedSinkFile = `format = "agora/v1"

[pipelines.p.source]
type = "iterable"
records = [{n = 1}]

[pipelines.p.schedule]
mode = "once"

[[pipelines.p.sinks]]
type = "sqlite"
path = "out.db"
table = "t"

[[pipelines.p.sinks]]
type = "sqlite"
path = "other.db"
table = "t"
allow_unfenced = true
`

// Rule: without a coordinator, each fenced SQL sink (allow_unfenced not
// set) is a warning naming AGORA_DISTRIBUTED_REDIS_URL and allow_unfenced,
// at the sink's type; with one, or with allow_unfenced, nothing is said.
func TestWarningsNameAFencedSinkWithoutACoordinator(t *testing.T) {
	r := etl.Builtins()
	sqlite.Register(r)
	f, err := Parse("/tmp/p.toml", []byte(fencedSinkFile), WithRegistry(r))
	if err != nil {
		t.Fatal(err)
	}
	ws := f.Warnings(false)
	if len(ws) != 1 {
		t.Fatalf("%d warnings, want 1 (the second sink allows unfenced writes):\n%v", len(ws), ws)
	}
	got := ws[0].String()
	for _, want := range []string{"/tmp/p.toml:11:8: pipelines.p.sinks[0]: the sqlite sink", "AGORA_DISTRIBUTED_REDIS_URL", "allow_unfenced = true", "fencing token 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("warning lacks %q: %s", want, got)
		}
	}
	if ws := f.Warnings(true); len(ws) != 0 {
		t.Errorf("warnings with a coordinator: %v", ws)
	}
}
