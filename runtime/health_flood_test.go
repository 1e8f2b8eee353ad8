package runtime_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// floodNofile is the descriptor limit of the flood helper: far fewer than
// the connections the test holds against it.
const floodNofile = 64

// runFloodHelper is a worker whose soft and hard RLIMIT_NOFILE are
// floodNofile. Its continuous pipeline appends a line to AGORA_TEST_OUT per
// run, opening and closing the file each time as a file-writing pipeline
// does; it prints "ADDR host:port" of its health server, then READY.
func runFloodHelper() int {
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: floodNofile, Max: floodNofile}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 3
	}
	out := os.Getenv("AGORA_TEST_OUT")
	var pool atomic.Pointer[runtime.WorkerPool]
	go func() {
		for pool.Load() == nil || pool.Load().HealthAddr() == "" {
			time.Sleep(time.Millisecond)
		}
		fmt.Println("ADDR", pool.Load().HealthAddr())
		fmt.Println("READY")
	}()
	var n atomic.Int64
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	getWorker := func() (*runtime.WorkerPool, error) {
		p := runtime.NewWorkerPool(runtime.WithGracefulShutdownTimeout(5*time.Second), runtime.WithLogger(logger),
			runtime.WithHealthAddr("127.0.0.1:0")).
			Register(&runtime.ScheduledPipeline{PipelineID: "writer", Schedule: runtime.Continuous(),
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(ctx context.Context) error {
						f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
						if err != nil {
							return err
						}
						fmt.Fprintln(f, "run", n.Add(1))
						time.Sleep(2 * time.Millisecond) // a run takes a while
						return f.Close()
					}), nil
				}})
		pool.Store(p)
		return p, nil
	}
	p, _ := getWorker()
	if err := p.Run(context.Background()); err != nil {
		logger.Error("worker failed", slog.Any("error", err))
		return 1
	}
	return 0
}

// probe sends GET path on a new connection and returns the status, or an
// error.
func probe(addr, path string) (int, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// TestHealthFloodDoesNotStarveRuns holds many more connections than the
// worker has descriptors against its health port (half after one GET
// /healthz, half silent) and checks that runs keep succeeding and /healthz
// keeps answering new probes.
func TestHealthFloodDoesNotStarveRuns(t *testing.T) {
	hp := startHelper(t, "fdflood")
	hp.WaitFor(t, hp.Stdout, "ADDR ")
	_, addr, _ := strings.Cut(hp.Stdout.String(), "ADDR ")
	addr, _, _ = strings.Cut(addr, "\n")
	runs := func() int { b, _ := os.ReadFile(hp.Out); return bytes.Count(b, []byte("\n")) }

	const flood = 4 * floodNofile
	held := make([]net.Conn, 0, flood)
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	answered := 0
	for i := range flood {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		held = append(held, c)
		if i%2 == 1 {
			continue // silent: holds a connection that never sends a request
		}
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: worker\r\n\r\n"); err != nil {
			continue
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			resp.Body.Close()
			answered++
		}
	}
	if answered < flood/4 {
		t.Errorf("only %d of the flood's %d GET /healthz were answered", answered, flood/2)
	}

	// Every connection is still held by the client; the worker keeps
	// running and answering.
	before := runs()
	for i := range 5 {
		code, err := probe(addr, "/healthz")
		if err != nil || code != http.StatusOK {
			t.Fatalf("probe %d during the flood: %d %v\n%s", i, code, err, hp.Stderr)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for runs() < before+50 {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs in 10s during the flood (from %d)\n%s", runs()-before, before, hp.Stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, err := probe(addr, "/readyz"); err != nil || code != http.StatusOK {
		t.Errorf("/readyz during the flood: %d %v", code, err)
	}
	logs := hp.Stderr.String()
	if strings.Contains(logs, "too many open files") {
		t.Errorf("the worker ran out of descriptors:\n%s", logs)
	}
	if !strings.Contains(logs, "health server at its connection cap") {
		t.Errorf("no WARN about the connection cap:\n%s", logs)
	}
	hp.Signal(t, syscall.SIGTERM)
	if code := hp.Wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, hp.Stderr)
	}
}
