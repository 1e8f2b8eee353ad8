package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/helperproc"
	"github.com/agora-etl/agora/runtime"
)

// helperEnv names the scenario a re-executed test binary runs instead of
// the tests.
const helperEnv = "AGORA_RUNTIME_TEST_HELPER"

func TestMain(m *testing.M) {
	switch scenario := os.Getenv(helperEnv); scenario {
	case "fdflood":
		os.Exit(runFloodHelper())
	case "main", "main-stuck", "main-broken":
		runMainHelper(scenario) // runtime.Main exits
	}
	if name := os.Getenv(benchHelperEnv); name != "" {
		os.Exit(runBenchHelper(name))
	}
	os.Exit(m.Run())
}

type helperProc = helperproc.Proc

func startHelper(t *testing.T, scenario string) *helperProc {
	t.Helper()
	return helperproc.Start(t, helperEnv, scenario, "-test.run=^$")
}

// startHelperArgs starts the test binary as the helper of scenario with
// args, and waits until it prints READY.
func startHelperArgs(t *testing.T, scenario string, args ...string) *helperProc {
	t.Helper()
	return helperproc.Start(t, helperEnv, scenario, args...)
}

// runMainHelper is a program whose main is runtime.Main, with the
// arguments the test started it with. Its pool has one Every pipeline,
// which prints READY as its first run starts: "main" runs return at once,
// "main-stuck" runs wait for their cancellation, ignoring the graceful
// shutdown. "main-broken" has no pool: getWorker fails.
func runMainHelper(scenario string) {
	var ready sync.Once
	runtime.Main(func() (*runtime.WorkerPool, error) {
		if scenario == "main-broken" {
			return nil, errors.New("no orders database configured")
		}
		fmt.Fprintln(os.Stderr, "getWorker called")
		pool := runtime.NewWorkerPool(runtime.WithGracefulShutdownTimeout(10 * time.Second))
		pool.Register(&runtime.ScheduledPipeline{PipelineID: "every", Schedule: runtime.Every(20 * time.Millisecond),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					ready.Do(func() { fmt.Println("READY") })
					if scenario == "main-stuck" {
						<-ctx.Done()
					}
					return nil
				}), nil
			}})
		return pool, nil
	})
}

// runMainOnce runs the runtime.Main helper of scenario with args to its
// end and returns its exit status and standard error.
func runMainOnce(t *testing.T, scenario string, args ...string) (int, string) {
	t.Helper()
	var stderr syncBuffer
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+scenario)
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestMainRunsThePoolUntilInterrupted: runtime.Main, deprecated but kept,
// runs the pool getWorker builds; the first SIGINT shuts it down
// gracefully and it exits 0.
func TestMainRunsThePoolUntilInterrupted(t *testing.T) {
	hp := startHelperArgs(t, "main")
	hp.Signal(t, os.Interrupt)
	if code := hp.Wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0\n%s", code, hp.Stderr)
	}
}

// TestMainSecondInterruptExits130: a second SIGINT during the graceful
// shutdown forces it, and runtime.Main exits as worker.Main does.
func TestMainSecondInterruptExits130(t *testing.T) {
	hp := startHelperArgs(t, "main-stuck")
	hp.Signal(t, os.Interrupt)
	hp.WaitFor(t, hp.Stderr, "shutting down gracefully")
	hp.Signal(t, os.Interrupt)
	if code := hp.Wait(t, 5*time.Second); code != 130 {
		t.Fatalf("exit %d after a second SIGINT, want 130\n%s", code, hp.Stderr)
	}
}

// TestMainRefusesArguments: runtime.Main has no flags and no subcommands,
// and a program given one says where they are instead of ignoring it.
func TestMainRefusesArguments(t *testing.T) {
	for _, args := range [][]string{{"-health-port"}, {"-health-port", "8080"}, {"pipelines"}} {
		code, stderr := runMainOnce(t, "main", args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, stderr)
		}
		for _, want := range []string{"runtime.Main takes no flags or subcommands", "worker.Main", "github.com/agora-etl/agora/worker", `"` + args[0] + `"`} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%q: stderr lacks %q:\n%s", args, want, stderr)
			}
		}
		if strings.Contains(stderr, "getWorker called") {
			t.Errorf("%q: the pool was built:\n%s", args, stderr)
		}
	}
}

// TestMainGetWorkerErrorExits1: getWorker's error is printed after the
// program's name, and runtime.Main exits 1.
func TestMainGetWorkerErrorExits1(t *testing.T) {
	code, stderr := runMainOnce(t, "main-broken")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if want := filepath.Base(os.Args[0]) + ": no orders database configured\n"; stderr != want {
		t.Fatalf("stderr %q, want %q", stderr, want)
	}
}
