package worker_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

// testOptions give the entry a command and a help section of its own.
var testOptions = []worker.Option{
	worker.WithCommand(worker.Command{Name: "echo-test", Summary: "prints its arguments",
		Run: func(_ context.Context, args []string, stdout, _ io.Writer) int {
			io.WriteString(stdout, strings.Join(args, "|"))
			return 7
		}}),
	worker.WithHelp(worker.HelpSection{Title: "Environment (test)", Body: "  AGORA_TEST_VAR\n"}),
}

func subcommandWorker(runs *atomic.Int32, fail bool) func() (*runtime.WorkerPool, error) {
	return func() (*runtime.WorkerPool, error) {
		mk := func(id string, s runtime.Schedule, err error) *runtime.ScheduledPipeline {
			return &runtime.ScheduledPipeline{PipelineID: id, Schedule: s, Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { runs.Add(1); return err }), nil
			}}
		}
		var err error
		if fail {
			err = errors.New("sink down")
		}
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(mk("hourly", runtime.MustCron("0 * * * *"), nil)).
			Register(mk("often", runtime.Every(5*time.Minute), err)), nil
	}
}

func runMain(args []string, getWorker func() (*runtime.WorkerPool, error)) (int, string, string) {
	var out, errOut bytes.Buffer
	code := worker.RunMainTo(context.Background(), args, &out, &errOut, getWorker, testOptions...)
	return code, out.String(), errOut.String()
}

func TestWorkerSubcommands(t *testing.T) {
	var runs atomic.Int32
	code, out, _ := runMain([]string{"pipelines"}, subcommandWorker(&runs, false))
	next := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	wantNext := []string{next.Format("2006-01-02 15:04:05"), next.Add(time.Hour).Format("2006-01-02 15:04:05"), next.Add(2 * time.Hour).Format("2006-01-02 15:04:05")}
	if code != 0 || !strings.Contains(out, "PIPELINE") || !strings.Contains(out, `hourly    cron="0 * * * *"`) ||
		!strings.Contains(out, strings.Join(wantNext, ", ")) || !strings.Contains(out, "5m0s after each run") || runs.Load() != 0 {
		t.Fatalf("pipelines: exit %d\n%s", code, out)
	}

	code, _, errOut := runMain([]string{"-log-level", "error", "run", "hourly"}, subcommandWorker(&runs, false))
	if code != 0 || runs.Load() != 1 {
		t.Fatalf("run hourly: exit %d, runs %d: %s", code, runs.Load(), errOut)
	}
	code, _, errOut = runMain([]string{"run", "hourly", "often"}, subcommandWorker(&runs, true))
	if code != 1 || runs.Load() != 3 || !strings.Contains(errOut, "sink down") || !strings.Contains(errOut, `pipeline \"often\"`) {
		t.Fatalf("run with a failure: exit %d, runs %d: %s", code, runs.Load(), errOut)
	}
	if code, _, errOut = runMain([]string{"run", "nope"}, subcommandWorker(&runs, false)); code != 1 || !strings.Contains(errOut, "unknown pipeline") {
		t.Fatalf("run nope: exit %d: %s", code, errOut)
	}
	if code, _, errOut = runMain([]string{"run"}, subcommandWorker(&runs, false)); code != 2 || !strings.Contains(errOut, "name the pipelines") {
		t.Fatalf("run without ids: exit %d: %s", code, errOut)
	}

	if code, out, _ = runMain([]string{"version"}, nil); code != 0 || !strings.HasPrefix(out, "agora ") || !strings.Contains(out, "\ngo go1.") {
		t.Fatalf("version: exit %d\n%s", code, out)
	}
	if code, out, _ = runMain([]string{"echo-test", "a", "-b"}, nil); code != 7 || out != "a|-b" {
		t.Fatalf("registered command: exit %d, %q", code, out)
	}
	if code, _, errOut = runMain([]string{"frobnicate"}, nil); code != 1 || !strings.Contains(errOut, `"frobnicate" is not a subcommand`) ||
		!strings.Contains(errOut, "echo-test") {
		t.Fatalf("unknown subcommand: exit %d: %s", code, errOut)
	}
	if code, out, _ = runMain([]string{"fleet", "help"}, nil); code != 0 || !strings.Contains(out, "workers") {
		t.Fatalf("fleet help: exit %d\n%s", code, out)
	}
}

// TestCommandsAreCheckedBeforeAnythingRuns: a command without a name or a
// Run, or one that takes a subcommand's name, fails the entry at once.
func TestCommandsAreCheckedBeforeAnythingRuns(t *testing.T) {
	run := func(context.Context, []string, io.Writer, io.Writer) int { return 0 }
	for _, c := range []worker.Command{{Name: "", Run: run}, {Name: "x"}, {Name: "run", Run: run}, {Name: "fleet", Run: run}, {Name: "help", Run: run}} {
		var out, errOut bytes.Buffer
		code := worker.RunMainTo(context.Background(), []string{"version"}, &out, &errOut, nil, worker.WithCommand(c))
		if code != worker.ExitFailure || !strings.Contains(errOut.String(), "WithCommand") || out.Len() != 0 {
			t.Errorf("command %q: exit %d, stdout %q, stderr %q", c.Name, code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	twice := worker.WithCommand(worker.Command{Name: "twice", Run: run})
	if code := worker.RunMainTo(context.Background(), []string{"version"}, &out, &errOut, nil, twice, twice); code != worker.ExitFailure {
		t.Errorf("a command given twice: exit %d: %s", code, errOut.String())
	}
}

func TestWorkerHelpListsFlagsCommandsSettingsAndPipelines(t *testing.T) {
	var runs atomic.Int32
	code, _, errOut := runMain([]string{"-help"}, subcommandWorker(&runs, false))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"-health-addr", "-health-port", "-log-level", "pipelines", "run", "version", "echo-test  prints its arguments",
		"Environment (test):\n  AGORA_TEST_VAR", "Environment (runtime/distributed):\n  AGORA_DISTRIBUTED_REDIS_URL", "fleet ", "Pipelines:", `hourly  cron="0 * * * *"`, "often   every=5m0s"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("-help lacks %q:\n%s", want, errOut)
		}
	}
	if runs.Load() != 0 {
		t.Fatal("-help ran a pipeline")
	}
	if code, out, _ := runMain([]string{"help"}, subcommandWorker(&runs, false)); code != 0 || !strings.Contains(out, "Commands:") {
		t.Fatalf("help: exit %d\n%s", code, out)
	}
}
