package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

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

func waitAddr(t *testing.T, pool *runtime.WorkerPool) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if a := pool.HealthAddr(); a != "" {
			return a
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("health server did not listen")
	return ""
}

func TestHealthEndpointsOverHTTP(t *testing.T) {
	coord := newFakeCoord()
	coord.startGate = make(chan struct{})
	coord.status = map[string]any{"redis": "up"}
	coord.setHealthy(errors.New("redis unreachable"))
	inRun := make(chan struct{})
	release := make(chan struct{})
	pool := quietPool(runtime.WithCoordinator(coord), runtime.WithWorkerID("worker-7"), runtime.WithHealthAddr("127.0.0.1:0")).
		Register(&runtime.ScheduledPipeline{PipelineID: "consumer", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				select {
				case <-inRun:
				default:
					close(inRun)
				}
				<-runtime.ShutdownRequested(ctx)
				<-release
				return nil
			}), nil
		}}).
		Register(&runtime.ScheduledPipeline{PipelineID: "nightly", Schedule: runtime.MustCron("0 3 * * *"), Factory: nopFactory})
	if pool.HealthAddr() != "" {
		t.Fatal("address before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	addr := waitAddr(t, pool)
	if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") {
		t.Fatalf("addr %q", addr)
	}

	if code, body := get(t, addr, "/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, addr, "/readyz"); code != 503 || !strings.Contains(body, "starting") {
		t.Fatalf("/readyz while starting = %d %q", code, body)
	}
	close(coord.startGate)
	waitClosed(t, inRun, "the run")
	if code, body := get(t, addr, "/readyz"); code != 503 || !strings.Contains(body, "redis unreachable") {
		t.Fatalf("/readyz with unhealthy coordinator = %d %q", code, body)
	}
	coord.setHealthy(nil)
	if code, body := get(t, addr, "/readyz"); code != 200 || strings.TrimSpace(body) != "ready" {
		t.Fatalf("/readyz = %d %q", code, body)
	}

	code, body := get(t, addr, "/status")
	if code != 200 {
		t.Fatalf("/status = %d", code)
	}
	var st struct {
		WorkerID  string `json:"worker_id"`
		State     string `json:"state"`
		Pipelines []struct {
			ID        string     `json:"pipeline_id"`
			Schedule  string     `json:"schedule"`
			State     string     `json:"state"`
			Runs      int        `json:"runs"`
			Skipped   int        `json:"skipped"`
			Errors    int        `json:"consecutive_errors"`
			Since     *time.Time `json:"running_since"`
			LastStart *time.Time `json:"last_run_start"`
			LastEnd   *time.Time `json:"last_run_end"`
			LastError *string    `json:"last_error"`
			NextRun   *time.Time `json:"next_run"`
			Token     int64      `json:"lease_token"`
		} `json:"pipelines"`
		Coordinator map[string]any `json:"coordinator"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("bad JSON %v:\n%s", err, body)
	}
	if st.WorkerID != "worker-7" || st.State != "running" || len(st.Pipelines) != 2 || st.Coordinator["redis"] != "up" {
		t.Fatalf("status %s", body)
	}
	c, n := st.Pipelines[0], st.Pipelines[1]
	if c.ID != "consumer" || c.State != "running" || c.Schedule != "continuous" || c.Since == nil || c.LastStart != nil || c.LastEnd != nil || c.Token != 101 || c.NextRun != nil || c.LastError == nil {
		t.Fatalf("consumer status %+v", c)
	}
	if n.ID != "nightly" || n.State != "idle" || n.Schedule != `cron="0 3 * * *"` || n.NextRun == nil || n.NextRun.Hour() != 3 || n.LastStart != nil || n.Runs != 0 {
		t.Fatalf("nightly status %+v", n)
	}

	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := get(t, addr, "/readyz")
		if code == 503 && strings.Contains(body, "shutting down") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz during shutdown = %d %q", code, body)
		}
		time.Sleep(time.Millisecond)
	}
	if code, _ := get(t, addr, "/healthz"); code != 200 {
		t.Fatal("/healthz must stay up during shutdown")
	}
	close(release)
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("health server still listening after Run returned")
	}
}

func TestHealthAddressInUseFailsBeforeStarting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	coord := newFakeCoord()
	pool := quietPool(runtime.WithCoordinator(coord), runtime.WithHealthAddr(ln.Addr().String())).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: nopFactory})
	err = pool.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "health server") {
		t.Fatalf("Run = %v", err)
	}
	if len(coord.callLog()) != 0 {
		t.Fatalf("coordinator used: %v", coord.callLog())
	}
	if st := pool.Status().State; st != "stopped" {
		t.Fatalf("state after a failed start = %q", st)
	}
}

func TestHealthServerAsHandler(t *testing.T) {
	pool := quietPool().Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Hour), Factory: nopFactory})
	h := runtime.NewHealthServer(pool)
	if err := h.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go h.Serve()
	defer h.Shutdown(context.Background())
	if code, body := get(t, h.Addr(), "/readyz"); code != 503 || !strings.Contains(body, "starting") {
		t.Fatalf("/readyz before Run = %d %q", code, body)
	}
	code, body := get(t, h.Addr(), "/status")
	if code != 200 || !strings.Contains(body, `"pipeline_id": "p"`) || !strings.Contains(body, `"state": "starting"`) {
		t.Fatalf("/status before Run = %d %s", code, body)
	}
	if code, _ := get(t, h.Addr(), "/nope"); code != 404 {
		t.Fatalf("unknown path = %d", code)
	}
}

// slowHealthCoord holds its Healthy check until released, like a
// coordinator pinging a slow Redis.
type slowHealthCoord struct {
	*fakeCoord
	asked, answer chan struct{}
	once          sync.Once
}

func (c *slowHealthCoord) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.HealthReporter = c
	return caps
}

func (c *slowHealthCoord) Healthy(context.Context) error {
	c.once.Do(func() { close(c.asked) })
	<-c.answer
	return nil
}

// TestReadyzDuringASlowCheckSeesTheShutdown begins a shutdown while /readyz
// waits for the coordinator's health check: the answer must be 503, not a
// 200 based on the state read before the check.
func TestReadyzDuringASlowCheckSeesTheShutdown(t *testing.T) {
	coord := &slowHealthCoord{fakeCoord: newFakeCoord(), asked: make(chan struct{}), answer: make(chan struct{})}
	pool := quietPool(runtime.WithCoordinator(coord), runtime.WithHealthPort(0)).
		Register(&runtime.ScheduledPipeline{PipelineID: "nightly", Schedule: runtime.MustCron("0 3 * * *"), Factory: nopFactory})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(pool, ctx)
	addr := waitAddr(t, pool)
	waitClosed(t, pool.Started(), "the pool to start")

	type reply struct {
		code int
		body string
	}
	got := make(chan reply, 1)
	go func() {
		code, body := get(t, addr, "/readyz")
		got <- reply{code, body}
	}()
	waitClosed(t, coord.asked, "the health check")
	cancel() // shutdown begins while the check is out
	deadline := time.Now().Add(5 * time.Second)
	for pool.Status().State != "shutting_down" && pool.Status().State != "stopped" {
		if time.Now().After(deadline) {
			t.Fatal("the pool did not start shutting down")
		}
		time.Sleep(time.Millisecond)
	}
	close(coord.answer)
	if r := <-got; r.code != 503 || !strings.Contains(r.body, "not ready") {
		t.Fatalf("/readyz = %d %q; want 503 once shutdown began", r.code, r.body)
	}
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
}
