package worker_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/helperproc"
	"github.com/agora-etl/agora/internal/syncbuf"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

// helperEnv names the scenario a re-executed test binary runs instead of
// the tests.
const helperEnv = "AGORA_WORKER_TEST_HELPER"

func TestMain(m *testing.M) {
	if scenario := os.Getenv(helperEnv); scenario != "" {
		os.Exit(runHelper(scenario))
	}
	os.Exit(m.Run())
}

// runHelper is a worker binary's main for the subprocess signal tests. Its
// pipeline writes to the file named by AGORA_TEST_OUT through a buffered
// writer, prints READY once its run is in flight, and reacts to shutdown as
// the scenario says.
func runHelper(scenario string) int {
	out := os.Getenv("AGORA_TEST_OUT")
	graceful := 10 * time.Second
	if scenario == "timeout" || scenario == "stuck" {
		graceful = 300 * time.Millisecond
	}
	opts := []runtime.PoolOption{runtime.WithGracefulShutdownTimeout(graceful)}
	if scenario == "slowstop" {
		opts = append(opts, runtime.WithCoordinator(slowStopCoordinator{runtime.NewLocalCoordinator(runtime.SystemClock{})}))
	}
	getWorker := func() (*runtime.WorkerPool, error) {
		pool := runtime.NewWorkerPool(opts...)
		pool.Register(&runtime.ScheduledPipeline{PipelineID: "writer", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w := bufio.NewWriter(f)
				fmt.Fprintln(w, "begin")
				fmt.Println("READY")
				switch scenario {
				case "finish", "slowstop":
					<-runtime.ShutdownRequested(ctx)
					time.Sleep(200 * time.Millisecond) // the rest of the batch
					fmt.Fprintf(w, "ctx-alive=%v\n", ctx.Err() == nil)
					fmt.Fprintln(w, "done")
				case "stuck": // ignores even its cancellation
					fmt.Fprintln(w, "stuck")
					_ = w.Flush()
					select {}
				default: // ignores ShutdownRequested until cancelled
					<-ctx.Done()
					fmt.Fprintf(w, "cancelled: %v\n", context.Cause(ctx))
				}
				return w.Flush()
			}), nil
		}})
		return pool, nil
	}
	return worker.RunMain(context.Background(), []string{"-log-format", "json"}, os.Stderr, getWorker)
}

// syncBuffer collects what a helper or an entry writes from several
// goroutines.
type syncBuffer = syncbuf.Buffer

func nopFactory(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}

// get fetches path from addr.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// slowStopCoordinator takes as long as it is allowed to stop, like a
// coordinator releasing leases on a Redis that does not answer.
type slowStopCoordinator struct{ runtime.Coordinator }

func (c slowStopCoordinator) Stop(ctx context.Context) error {
	fmt.Println("STOPPING")
	<-ctx.Done()
	return ctx.Err()
}

type helperProc = helperproc.Proc

func startHelper(t *testing.T, scenario string) *helperProc {
	t.Helper()
	return helperproc.Start(t, helperEnv, scenario, "-test.run=^$")
}

// waitLog waits until the helper has logged text.
func waitLog(t *testing.T, hp *helperProc, text string) {
	t.Helper()
	hp.WaitFor(t, hp.Stderr, text)
}

// forceExit sends sig and checks that the helper exits at once with 130.
func forceExit(t *testing.T, hp *helperProc, sig os.Signal) {
	t.Helper()
	start := time.Now()
	hp.Signal(t, sig)
	if code := hp.Wait(t, 5*time.Second); code != worker.ExitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", code, hp.Stderr)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("forced exit took %v after the signal", el)
	}
}

func TestSignalFirstInterruptFinishesRunAndExitsZero(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			hp := startHelper(t, "finish")
			hp.Signal(t, sig)
			if code := hp.Wait(t, 10*time.Second); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, hp.Stderr)
			}
			if got, want := hp.Output(t), "begin\nctx-alive=true\ndone\n"; got != want {
				t.Fatalf("output %q, want %q (run finished with a live context and flushed)", got, want)
			}
			logs := hp.Stderr.String()
			for _, want := range []string{`"msg":"shutting down gracefully"`, `"reason":"received ` + sig.String(), `"msg":"run finished","pipeline_id":"writer","run_number":1`} {
				if !strings.Contains(logs, want) {
					t.Errorf("logs lack %s:\n%s", want, logs)
				}
			}
		})
	}
}

func TestSignalSecondInterruptCancelsAtOnce(t *testing.T) {
	t.Parallel()
	hp := startHelper(t, "force")
	hp.Signal(t, os.Interrupt)
	select {
	case <-hp.Exited():
		t.Fatalf("exited after the first interrupt\n%s", hp.Stderr)
	case <-time.After(300 * time.Millisecond):
	}
	forceExit(t, hp, os.Interrupt)
	if got := hp.Output(t); got != "begin\ncancelled: "+runtime.ErrForcedShutdown.Error()+"\n" {
		t.Fatalf("output %q", got)
	}
}

func TestSignalGracefulTimeoutCancelsStuckRun(t *testing.T) {
	t.Parallel()
	hp := startHelper(t, "timeout")
	start := time.Now()
	hp.Signal(t, syscall.SIGTERM)
	code := hp.Wait(t, 10*time.Second)
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("exited after %v, before the graceful timeout", el)
	}
	if code != worker.ExitFailure {
		t.Fatalf("exit %d, want 1\n%s", code, hp.Stderr)
	}
	if got := hp.Output(t); got != "begin\ncancelled: "+runtime.ErrGracefulTimeout.Error()+"\n" {
		t.Fatalf("output %q", got)
	}
}

func TestRunMainExitCodes(t *testing.T) {
	okWorker := func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "once", Schedule: runtime.Once(), Factory: nopFactory}), nil
	}
	failing := func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "bad", Schedule: runtime.Continuous(), MaxConsecutiveErrors: 1,
				Factory: func(context.Context) (runtime.Pipeline, error) { return nil, errors.New("no db") }}), nil
	}
	cases := []struct {
		name      string
		args      []string
		getWorker func() (*runtime.WorkerPool, error)
		code      int
		stderr    string
	}{
		{"clean", nil, okWorker, 0, `level=INFO msg="worker pool stopped"`},
		{"json logs", []string{"-log-format", "json", "-log-level", "debug"}, okWorker, 0, `"msg":"run started","pipeline_id":"once","run_number":-1`},
		{"help", []string{"-h"}, okWorker, 0, "-health-port"},
		{"unknown flag", []string{"-nope"}, okWorker, 1, "flag provided but not defined"},
		{"extra args", []string{"x"}, okWorker, 1, "unexpected arguments"},
		{"bad format", []string{"-log-format", "xml"}, okWorker, 1, `log format "xml"`},
		{"bad level", []string{"-log-level", "loud"}, okWorker, 1, `log level "loud"`},
		{"bad port", []string{"-health-port", "http"}, okWorker, 1, `-health-port "http"`},
		{"bad health addr", []string{"-health-addr", "no way!"}, okWorker, 1, `-health-addr "no way!": want host:port or a host`},
		{"bad health addr port", []string{"-health-addr", "127.0.0.1:99999"}, okWorker, 1, `port "99999"`},
		{"two health ports", []string{"-health-addr", "127.0.0.1:1", "-health-port", "2"}, okWorker, 1, "give the port once"},
		{"health host without port", []string{"-health-addr", "127.0.0.1"}, okWorker, 1, "names no port"},
		{"getWorker error", nil, func() (*runtime.WorkerPool, error) { return nil, errors.New("missing AGORA_DISTRIBUTED_REDIS_URL") }, 1, "missing AGORA_DISTRIBUTED_REDIS_URL"},
		{"nil pool", nil, func() (*runtime.WorkerPool, error) { return nil, nil }, 1, "nil pool"},
		{"invalid pipeline", nil, func() (*runtime.WorkerPool, error) {
			return runtime.NewWorkerPool().Register(&runtime.ScheduledPipeline{PipelineID: "x"}), nil
		}, 1, "nil Factory"},
		{"terminal error", nil, failing, 1, "no db"},
		{"quiet level", []string{"-log-level", "error"}, okWorker, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr syncBuffer
			code := worker.RunMain(context.Background(), c.args, &stderr, c.getWorker)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.stderr) {
				t.Fatalf("stderr lacks %q:\n%s", c.stderr, stderr.String())
			}
			if c.stderr == "" && stderr.String() != "" {
				t.Fatalf("want no output at level error, got:\n%s", stderr.String())
			}
		})
	}
}

func TestRunMainHealthPortFlagAndContextCancel(t *testing.T) {
	var poolPtr atomic.Pointer[runtime.WorkerPool]
	var ran atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr syncBuffer
	go func() {
		done <- worker.RunMain(ctx, []string{"-health-port", "0"}, &stderr, func() (*runtime.WorkerPool, error) {
			pool := runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
				Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(ctx context.Context) error {
						ran.Store(true)
						<-runtime.ShutdownRequested(ctx)
						return nil
					}), nil
				}})
			poolPtr.Store(pool)
			return pool, nil
		})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for (poolPtr.Load() == nil || poolPtr.Load().HealthAddr() == "" || !ran.Load()) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	addr := poolPtr.Load().HealthAddr()
	_, port, _ := strings.Cut(addr, "]:")
	if port == "" {
		_, port, _ = strings.Cut(addr, ":")
	}
	if code, _ := get(t, "127.0.0.1:"+port, "/readyz"); code != 200 {
		t.Fatalf("/readyz = %d", code)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunMain did not return")
	}
}

// TestRunMainRestoresTheStandardLoggers runs RunMain with its own stderr
// and checks that afterwards neither slog's default nor the log package
// still writes there: a program or test that embeds RunMain keeps its
// logging.
func TestRunMainRestoresTheStandardLoggers(t *testing.T) {
	var before bytes.Buffer
	log.SetOutput(&before)
	log.SetFlags(log.Lshortfile)
	defer func() { log.SetOutput(os.Stderr); log.SetFlags(log.LstdFlags) }()
	slogBefore := slog.Default()

	var stderr syncBuffer
	getWorker := func() (*runtime.WorkerPool, error) {
		return runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "once", Schedule: runtime.Once(), Factory: nopFactory}), nil
	}
	if code := worker.RunMain(context.Background(), []string{"-log-format", "json"}, &stderr, getWorker); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	during := stderr.String()
	log.Print("after RunMain")
	if slog.Default() != slogBefore {
		t.Error("slog's default logger is still RunMain's")
	}
	if stderr.String() != during {
		t.Errorf("the log package still writes to RunMain's stderr: %q", strings.TrimPrefix(stderr.String(), during))
	}
	if got := before.String(); !strings.Contains(got, "entry_test.go") || !strings.Contains(got, "after RunMain") {
		t.Errorf("the log package's own output and flags were not restored: %q", got)
	}
}

// TestSignalDuringCoordinatorStopExitsAtOnce sends a second SIGTERM while
// the coordinator stops (after the run finished): the stop is cut short
// and the exit is a forced one, instead of waiting out the stop's timeout.
func TestSignalDuringCoordinatorStopExitsAtOnce(t *testing.T) {
	t.Parallel()
	hp := startHelper(t, "slowstop")
	hp.Signal(t, syscall.SIGTERM)
	hp.WaitFor(t, hp.Stdout, "STOPPING") // past the graceful phase
	forceExit(t, hp, syscall.SIGTERM)
	if !strings.Contains(hp.Stderr.String(), "cutting the coordinator's stop short") {
		t.Errorf("logs do not say the stop was cut short:\n%s", hp.Stderr)
	}
}

// TestSignalAfterGracefulTimeoutAbandonsAndExits130 has a run that ignores
// even its cancellation: after the graceful timeout a further SIGTERM
// abandons it, and that forced exit reports 130.
func TestSignalAfterGracefulTimeoutAbandonsAndExits130(t *testing.T) {
	t.Parallel()
	hp := startHelper(t, "stuck")
	hp.Signal(t, syscall.SIGTERM)
	waitLog(t, hp, "cancelling runs still in flight")
	forceExit(t, hp, syscall.SIGTERM)
}

func TestRunMainHealthAddrBindsTheGivenHost(t *testing.T) {
	for _, args := range [][]string{
		{"-health-addr", "127.0.0.1:0"},
		{"-health-addr", "127.0.0.1", "-health-port", "0"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var poolPtr atomic.Pointer[runtime.WorkerPool]
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			var stderr syncBuffer
			go func() {
				done <- worker.RunMain(ctx, args, &stderr, func() (*runtime.WorkerPool, error) {
					pool := runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
						Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Hour), Factory: nopFactory})
					poolPtr.Store(pool)
					return pool, nil
				})
			}()
			deadline := time.Now().Add(5 * time.Second)
			for (poolPtr.Load() == nil || poolPtr.Load().HealthAddr() == "") && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			addr := poolPtr.Load().HealthAddr()
			if !strings.HasPrefix(addr, "127.0.0.1:") {
				t.Fatalf("health server on %q, want loopback", addr)
			}
			if code, _ := get(t, addr, "/metrics"); code != 200 {
				t.Fatalf("/metrics = %d", code)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
		})
	}
}
