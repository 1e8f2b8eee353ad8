package ui_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"net/http/httptest"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/fleet/ui"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// chromium returns the browser to drive, or skips (fails under CI=true)
// when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found; CI must have it installed (apt-get install chromium)")
	}
	t.Skip("chromium not found; skipping the browser test outside CI")
	return ""
}

// startFleet runs two workers on url, each with "orders" (hourly) and
// "loader", which fails every run with an error naming a URL with a
// password.
func startFleet(t *testing.T, url string) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, id := range []string{"worker-a", "worker-b"} {
		coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: url, LeaseTTL: 5 * time.Second, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = coord.Close() })
		pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(quiet), runtime.WithWorkerID(id), runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "orders", Schedule: runtime.MustCron("0 * * * *"),
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
				}}).
			Register(&runtime.ScheduledPipeline{PipelineID: "loader", Schedule: runtime.MustCron("30 2 * * *"),
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(context.Context) error {
						return errors.New("load: dial redis://etl:hunter2@warehouse:6379: connection refused")
					}), nil
				}})
		wg.Go(func() { _ = pool.Run(ctx) })
		<-pool.Started()
	}
}

func fleetCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := fleet.Run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("fleet %v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

func TestDashboardInABrowser(t *testing.T) {
	browser := chromium(t)
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	startFleet(t, srv.URL())

	// A failed run of loader, on whichever worker takes the trigger.
	fleetCmd(t, "trigger", "loader")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(fleetCmd(t, "runs", "loader"), "failed") {
		if time.Now().After(deadline) {
			t.Fatal("the triggered run of loader never showed up in fleet runs")
		}
		time.Sleep(50 * time.Millisecond)
	}

	b, err := distributed.OpenInspector(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	const token = "let-me-in"
	web := httptest.NewServer(ui.NewHandler(b, ui.Options{Token: token}))
	t.Cleanup(web.Close)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800))...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(alloc)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()

	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("driving chromium: %v", err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("reading %s in chromium: %v", sel, err)
		}
		return s
	}
	do(chromedp.Navigate(web.URL+"/"), chromedp.WaitVisible("#pipelines"))
	front := text("#pipelines")
	do(chromedp.Click(`a[href="/pipelines/loader"]`), chromedp.WaitVisible("#runs"))
	loaderPage := text("body")
	do(chromedp.SendKeys("#token-input", token), chromedp.Click("#pause"), chromedp.WaitVisible("#notice"))
	paused := text("#paused")
	do(chromedp.Navigate(web.URL+"/"), chromedp.WaitVisible("#workers"))
	frontAfter := text("body")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	for _, want := range []string{"orders", "loader", "failed"} {
		if !strings.Contains(front, want) {
			t.Errorf("front page's pipelines lack %q:\n%s", want, front)
		}
	}
	if !strings.Contains(loaderPage, "load: dial redis://etl:xxxxx@warehouse:6379: connection refused") {
		t.Errorf("loader's page does not show the failed run's error:\n%s", loaderPage)
	}
	if strings.Contains(loaderPage+frontAfter, "hunter2") || strings.Contains(loaderPage+frontAfter, token) {
		t.Error("the dashboard shows a password or its token")
	}
	if !strings.HasPrefix(strings.TrimSpace(paused), "paused") {
		t.Errorf("after clicking pause the page says %q", paused)
	}
	if !strings.Contains(frontAfter, "worker-a") || !strings.Contains(frontAfter, "worker-b") || !strings.Contains(frontAfter, "paused") {
		t.Errorf("front page after pausing:\n%s", frontAfter)
	}
	// fleet pipelines agrees: loader (the first row) is paused.
	out := fleetCmd(t, "pipelines")
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "loader") || !strings.Contains(lines[1], "failed") || !strings.Contains(lines[1], " yes ") {
		t.Errorf("fleet pipelines after the pause in the browser:\n%s", out)
	}
	if len(shot) < 1000 {
		t.Fatalf("screenshot of %d bytes", len(shot))
	}
	// The docs' picture is rewritten only when asked (go test ./fleet/ui
	// -update-screenshot), so a test run leaves the tree as it was.
	if !*updateScreenshot {
		return
	}
	path := filepath.Join("..", "..", "docs", "img", "dashboard.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite docs/img/dashboard.png from the browser test")
