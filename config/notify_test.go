package config

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/notify"
)

const notifyPipeline = `
[pipelines.p]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`

func TestWorkerNotifyTable(t *testing.T) {
	var out testOutputs
	doc := "format = \"agora/v1\"\n[worker.notify]\nurl = \"https://hooks.example.com/T/B/secret\"\non_failure = true\nattempts = 3\ntimeout = \"2s\"\n" + notifyPipeline
	f, err := Parse("n.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := Notify{URL: "https://hooks.example.com/T/B/secret", OnFailure: true, Attempts: 3, Timeout: 2 * time.Second}
	if f.Worker.Notify != want {
		t.Errorf("Notify = %+v, want %+v", f.Worker.Notify, want)
	}
}

func TestWorkerNotifyProblems(t *testing.T) {
	var out testOutputs
	for _, tc := range []struct{ table, want string }{
		{"[worker.notify]\nurl = \"https://h/x\"\non_falure = true", `x.toml:4:1: worker.notify: unknown key "on_falure" (did you mean "on_failure"?)`},
		{"[worker.notify]\non_failure = true", "x.toml:2:9: worker.notify: url is missing"},
		{"[worker.notify]\nurl = \"ftp://user:hunter2@h/x\"", `x.toml:3:7: worker.notify.url: notify: invalid webhook URL`},
		{"[worker.notify]\nurl = \"https://h/x\"\nattempts = 0", "x.toml:4:12: worker.notify.attempts"},
		{"[worker]\nnotfy = {}", `x.toml:3:1: worker: unknown key "notfy" (did you mean "notify"?)`},
	} {
		doc := "format = \"agora/v1\"\n" + tc.table + "\n" + notifyPipeline
		_, err := Parse("x.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.table, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows the password: %v", tc.table, err)
		}
	}
}

// TestPoolNotifiesTheConfiguredWebhook runs a file's pool whose only
// pipeline fails its one allowed run and checks the webhook got the stop.
func TestPoolNotifiesTheConfiguredWebhook(t *testing.T) {
	got := make(chan notify.Event, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev notify.Event
		_ = json.NewDecoder(r.Body).Decode(&ev)
		got <- ev
	}))
	defer srv.Close()
	f := &File{Worker: Worker{Notify: Notify{URL: srv.URL + "/hook"}}}
	opts, err := f.notifyOptions()
	if err != nil || len(opts) != 2 {
		t.Fatalf("notifyOptions = %d options, %v", len(opts), err)
	}
	pool := runtime.NewWorkerPool(append(opts, runtime.WithSignalHandling(false))...).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), MaxConsecutiveErrors: 1,
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { return context.DeadlineExceeded }), nil
			}})
	if err := pool.Run(context.Background()); err == nil {
		t.Fatal("Run = nil, want the stop")
	}
	select {
	case ev := <-got:
		if ev.Kind != notify.PipelineStopped || ev.PipelineID != "p" {
			t.Errorf("event %+v", ev)
		}
	default:
		t.Fatal("the shutdown hook returned before the stop event was sent")
	}
}
