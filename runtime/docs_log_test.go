package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// logKeyRE finds the keys of a logfmt line.
var logKeyRE = regexp.MustCompile(`(?:^| )([a-z_]+)=`)

// logKeys returns msg and the keys of a text log line in order, without
// fencing_token (present only under a fenced coordinator).
func logKeys(line string) (msg string, keys []string) {
	if m := regexp.MustCompile(`msg="([^"]*)"`).FindStringSubmatch(line); m != nil {
		msg = m[1]
	}
	for _, m := range logKeyRE.FindAllStringSubmatch(line, -1) {
		if m[1] != "fencing_token" {
			keys = append(keys, m[1])
		}
	}
	return msg, keys
}

// TestDocumentedLogLinesMatchTheLog compares the log lines quoted in
// docs/runtime.md with the ones a pool writes.
func TestDocumentedLogLinesMatchTheLog(t *testing.T) {
	doc, err := os.ReadFile("../docs/runtime.md")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	fail := true
	pool := runtime.NewWorkerPool(runtime.WithLogger(slog.New(slog.NewTextHandler(logs, nil))), runtime.WithSignalHandling(false))
	ran := make(chan struct{}, 4)
	pool.Register(&runtime.ScheduledPipeline{PipelineID: "orders-hourly", Schedule: runtime.Every(time.Millisecond), ErrorBackoff: time.Millisecond,
		Factory: func(ctx context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				defer func() { ran <- struct{}{} }()
				if fail {
					fail = false
					return errors.New("dial tcp: refused")
				}
				runtime.CountRecords(ctx, history.RecordCounts{In: 2, Out: 2})
				return nil
			}), nil
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	<-ran
	<-ran
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	real := map[string][]string{}
	for _, line := range strings.Split(logs.String(), "\n") {
		if msg, keys := logKeys(line); msg != "" {
			if _, seen := real[msg]; !seen {
				real[msg] = keys
			}
		}
	}
	checked := 0
	for _, line := range strings.Split(string(doc), "\n") {
		msg, keys := logKeys(line)
		want, ok := real[msg]
		if !ok || !strings.Contains(line, "level=") {
			continue
		}
		checked++
		if !slices.Equal(keys, want) {
			t.Errorf("docs/runtime.md quotes %q with keys %v; the log has %v", msg, keys, want)
		}
	}
	if checked < 3 {
		t.Fatalf("only %d documented lines checked; log:\n%s", checked, logs)
	}
}
