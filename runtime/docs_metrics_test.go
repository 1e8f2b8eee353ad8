package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/notify"
)

// TestDocsNameEveryMetricThePoolServes keeps the metric table of
// docs/operating.md complete: a pool with a notifier runs a pipeline that
// moves records, and every metric family its registry then serves is
// named in the Metrics section (the Go and process collectors as go_* and
// process_*).
func TestDocsNameEveryMetricThePoolServes(t *testing.T) {
	b, err := os.ReadFile("../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatal("docs/operating.md has no Metrics section")
	}
	section, _, _ = strings.Cut(section, "\n## ")

	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	wh, err := notify.New(notify.Options{URL: srv.URL, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				runtime.CountRecords(ctx, history.RecordCounts{In: 2, Out: 1, DeadLettered: 1})
				return nil
			}), nil
		}}
	d := &poolDriver{clock: clocktest.NewFake(t0), logs: &syncBuffer{},
		opts: []runtime.PoolOption{runtime.WithNotifier(wh), runtime.WithShutdownHook(wh.Close)}}
	d.start(t, sp)
	if err := d.result(t); err != nil {
		t.Fatal(err)
	}
	families, err := d.metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, f := range families {
		name := f.GetName()
		served[name] = true
		want := "`" + name + "`"
		for _, p := range []string{"go_", "process_"} {
			if strings.HasPrefix(name, p) {
				want = "`" + p + "*`"
			}
		}
		if !strings.Contains(section, want) {
			t.Errorf("docs/operating.md's Metrics section does not name %s", want)
		}
	}
	for _, name := range []string{"agora_runs_total", "agora_records_total", "agora_notify_sent_total", "agora_build_info", "go_goroutines"} {
		if !served[name] {
			t.Errorf("the pool serves no %s; the test no longer sees what it checks", name)
		}
	}
}
