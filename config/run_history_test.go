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
