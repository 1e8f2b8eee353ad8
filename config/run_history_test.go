package config

import (
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

func TestWorkerRunHistory(t *testing.T) {
	var out testOutputs
	doc := `format = "agora/v1"
[worker]
run_history = "25,2h"
[pipelines.p]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`
	f, err := Parse("w.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Worker.RunHistory; h == nil || *h != (history.Policy{Limit: 25, MaxAge: 2 * time.Hour}) {
		t.Fatalf("run_history = %+v", h)
	}

	bad := strings.Replace(doc, `"25,2h"`, `"lots"`, 1)
	_, err = Parse("w.toml", []byte(bad), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err == nil || !strings.Contains(err.Error(), "w.toml:3:15:") || !strings.Contains(err.Error(), "RUNS[,MAX_AGE]") {
		t.Fatalf("bad run_history: %v; want w.toml:3:15 and the format", err)
	}
}

// TestPoolKeepsARunHistory: the pool a file builds keeps its runs in
// memory within run_history, the defaults without it, and none with "off"
// (a store that keeps nothing, so no entry point gives it another).
func TestPoolKeepsARunHistory(t *testing.T) {
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	for setting, want := range map[string]history.Policy{
		"":                      {Limit: history.DefaultLimit, MaxAge: history.DefaultMaxAge},
		`run_history = "25,2h"`: {Limit: 25, MaxAge: 2 * time.Hour},
		`run_history = "off"`:   {Off: true},
	} {
		var out testOutputs
		doc := "format = \"agora/v1\"\n[worker]\n" + setting + `
[pipelines.p]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`
		f, err := Parse("w.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
		if err != nil {
			t.Fatal(err)
		}
		pool, err := f.Pool()
		if err != nil {
			t.Fatal(err)
		}
		m, ok := pool.RunHistory().(*history.Memory)
		if !ok || m.Policy() != want {
			t.Errorf("%q: RunHistory() = %#v, want a Memory keeping %+v", setting, pool.RunHistory(), want)
		}
	}
}
