package distributed

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Takeover tests run real worker processes (this test binary, re-executed
// as TestTakeoverHelperWorker): a pool with one Continuous pipeline whose
// run prints its token and blocks until its context is cancelled.

const (
	takeoverURLEnv    = "DISTRIBUTED_TAKEOVER_URL"
	takeoverWorkerEnv = "DISTRIBUTED_TAKEOVER_WORKER"
	// takeoverHeartbeat is the helpers' heartbeat: their records expire
	// 3×takeoverHeartbeat after the last refresh. The lease TTL is far
	// longer, so a takeover within seconds can only come from the record.
	takeoverHeartbeat = 300 * time.Millisecond
	takeoverTTL       = 60 * time.Second
)

// worker is a running helper worker process and its output lines.
type worker struct {
	t     *testing.T
	id    string
	cmd   *exec.Cmd
	lines chan string
}

func startWorker(t *testing.T, url, id string) *worker {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTakeoverHelperWorker$", "-test.v")
	cmd.Env = append(os.Environ(), takeoverURLEnv+"="+url, takeoverWorkerEnv+"="+id)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{t: t, id: id, cmd: cmd, lines: make(chan string, 100)}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	return w
}

// expect waits for a line starting with prefix and returns the rest.
func (w *worker) expect(prefix string, timeout time.Duration) (string, time.Time) {
	w.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				w.t.Fatalf("worker %s exited before printing %q", w.id, prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return strings.TrimSpace(strings.TrimPrefix(line, prefix)), time.Now()
			}
		case <-deadline:
			w.t.Fatalf("worker %s did not print %q within %s", w.id, prefix, timeout)
		}
	}
}

func (w *worker) signal(sig syscall.Signal) {
	w.t.Helper()
	if err := w.cmd.Process.Signal(sig); err != nil {
		w.t.Fatal(err)
	}
}

func parseToken(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("token %q: %v", s, err)
	}
	return n
}

// maxTakeover is the target: the record expires at most 3×heartbeat after
// the kill, and a Continuous pipeline asks again within a second.
const maxTakeover = 3*takeoverHeartbeat + runtime.LeaseRetryInterval

func TestTakeoverAfterSIGKILLWithinRecordExpiry(t *testing.T) {
	r := newReal(t)
	a := startWorker(t, r.srv.URL(), "a")
	oldToken := parseToken(t, first(a.expect("RUN ", 15*time.Second)))
	b := startWorker(t, r.srv.URL(), "b")
	b.expect("READY", 15*time.Second)

	a.signal(syscall.SIGKILL)
	killed := time.Now()
	got, at := b.expect("RUN ", maxTakeover+2*time.Second)
	took := at.Sub(killed)
	t.Logf("takeover %s after SIGKILL (target ≤ %s)", took, maxTakeover)
	if took > maxTakeover+200*time.Millisecond {
		t.Errorf("took over %s after the kill; want ≤ 3×heartbeat + 1 s = %s", took, maxTakeover)
	}
	// The last refresh was at most one renewal (one heartbeat) before the
	// kill, so the record lived at least two heartbeats more.
	if min := 2*takeoverHeartbeat - 50*time.Millisecond; took < min {
		t.Errorf("took over %s after the kill, before the dead worker's record could expire (≥ %s)", took, min)
	}
	if newToken := parseToken(t, got); newToken <= oldToken {
		t.Fatalf("takeover token %d not above the dead holder's %d", newToken, oldToken)
	}
}

func TestTakeoverFromPausedHolderCancelsItsRunOnResume(t *testing.T) {
	r := newReal(t)
	a := startWorker(t, r.srv.URL(), "a")
	oldToken := parseToken(t, first(a.expect("RUN ", 15*time.Second)))
	b := startWorker(t, r.srv.URL(), "b")
	b.expect("READY", 15*time.Second)

	a.signal(syscall.SIGSTOP)
	stopped := time.Now()
	got, at := b.expect("RUN ", maxTakeover+2*time.Second)
	if took := at.Sub(stopped); took > maxTakeover+200*time.Millisecond {
		t.Errorf("took over %s after SIGSTOP; want ≤ %s", took, maxTakeover)
	}
	newToken := parseToken(t, got)
	if newToken <= oldToken {
		t.Fatalf("takeover token %d not above the paused holder's %d", newToken, oldToken)
	}
	v := r.started(r.options(takeoverTTL), "validator")
	if ok, err := v.ValidateLease(ctx, "takeover", oldToken); ok || err != nil {
		t.Fatalf("ValidateLease(paused holder's token) = %v, %v; want false", ok, err)
	}

	a.signal(syscall.SIGCONT)
	resumed := time.Now()
	// On resume the holder is long past its deadline: its run is cancelled
	// before any renewal could ask Redis.
	cancelled, at := a.expect("CANCELLED ", 2*time.Second)
	if parseToken(t, cancelled) != oldToken {
		t.Fatalf("resumed holder cancelled token %s, want %d", cancelled, oldToken)
	}
	if after := at.Sub(resumed); after > 500*time.Millisecond {
		t.Errorf("resumed holder's run cancelled %s after SIGCONT; want at once", after)
	}
	// It then contends again without disturbing the new holder.
	time.Sleep(runtime.LeaseRetryInterval + 200*time.Millisecond)
	if ok, err := v.ValidateLease(ctx, "takeover", newToken); !ok || err != nil {
		t.Fatalf("new holder's token %d: %v, %v; want still valid", newToken, ok, err)
	}
	select {
	case line := <-b.lines:
		if strings.HasPrefix(line, "CANCELLED ") {
			t.Fatalf("the new holder's run was cancelled after the old holder resumed: %s", line)
		}
	default:
	}
}

func first(s string, _ time.Time) string { return s }

// TestTakeoverHelperWorker is not a test: the takeover tests run it in a
// child process as a worker.
func TestTakeoverHelperWorker(t *testing.T) {
	url := os.Getenv(takeoverURLEnv)
	if url == "" {
		t.Skip("helper process for the takeover tests")
	}
	id := os.Getenv(takeoverWorkerEnv)
	coord, err := NewRedisWorkerCoordinator(Options{
		RedisURL: url, LeaseTTL: takeoverTTL, HeartbeatInterval: takeoverHeartbeat,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	pool := runtime.NewWorkerPool(
		runtime.WithCoordinator(coord), runtime.WithWorkerID(id),
		runtime.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	pool.Register(&runtime.ScheduledPipeline{
		PipelineID: "takeover",
		Schedule:   runtime.Continuous(),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				lease, _ := runtime.LeaseFromContext(ctx)
				fmt.Printf("RUN %d\n", lease.FencingToken)
				<-ctx.Done()
				fmt.Printf("CANCELLED %d\n", lease.FencingToken)
				return ctx.Err()
			}), nil
		},
	})
	fmt.Println("READY")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = pool.Run(ctx)
}
