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
	"github.com/agora-etl/agora/runtime/history"
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

	// 30 more runs of loader, ten of them failed with a timeout, so its
	// page has a chart, two pages of runs and something to filter.
	seedRuns(t, srv.URL(), "loader", 30)

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
	// A bound for a browser that hangs, not a speed target: the session
	// takes about 10 s, several times that on two loaded cores (full-page
	// screenshots are the slowest steps).
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
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
	shoot := func(name string) {
		t.Helper()
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name+".png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// With a token, reading needs it: the browser lands on the login form.
	do(chromedp.Navigate(web.URL+"/"), chromedp.WaitVisible("#login"))
	shoot("login")
	do(chromedp.SendKeys("#login-token", token), chromedp.Click("#login-submit"), chromedp.WaitVisible("#pipelines"))
	front := text("#pipelines")
	shoot("front")
	do(chromedp.Click(`a[href="/pipelines/loader"]`), chromedp.WaitVisible("#runs"))
	loaderPage := text("body")
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#duration-chart rect.bar").length`))
	if err != nil || bars < 31 {
		t.Errorf("loader's chart has %d bars (%v), want one per run (31)", bars, err)
	}
	shoot("pipeline")
	count := text("#count")
	do(chromedp.Click("#next"), chromedp.WaitVisible("#prev"))
	count2 := text("#count")
	do(chromedp.SendKeys("#f-q", "TIMEOUT"), chromedp.Click("#f-apply"))
	// The page before the click has #runs too: wait for the filtered
	// page's address before reading it.
	for deadline := time.Now().Add(30 * time.Second); ; {
		// Reading the address fails while the page navigates: ask again.
		if loc, err := chromedp.Run(ctx, chromedp.Location()); err == nil && strings.Contains(loc, "q=TIMEOUT") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the filter form did not load the filtered page")
		}
		time.Sleep(20 * time.Millisecond)
	}
	do(chromedp.WaitVisible("#runs"))
	filtered := text("#count")
	filteredRows := text("#runs")
	shoot("pipeline-filtered")
	do(chromedp.Navigate(web.URL+"/runs?outcome=failed&q=timeout"), chromedp.WaitVisible("#runs"))
	runsPage := text("#count")
	shoot("runs")
	do(chromedp.Navigate(web.URL+"/pipelines/loader"), chromedp.WaitVisible("#runs"))
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
	if !strings.HasPrefix(count, "1–25 of 31 runs") || !strings.HasPrefix(count2, "26–31 of 31 runs") {
		t.Errorf("loader's run pages say %q then %q", count, count2)
	}
	if !strings.HasPrefix(filtered, "1–10 of 10 runs") || strings.Contains(filteredRows, "connection refused") {
		t.Errorf("filtering loader's runs for TIMEOUT: %q\n%s", filtered, filteredRows)
	}
	if !strings.HasPrefix(runsPage, "10 runs pass the filter") {
		t.Errorf("the fleet's runs filtered for failed timeouts: %q", runsPage)
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

// seedRuns records n runs of pipeline, ending over the last n minutes,
// through a coordinator of their own: every third fails with a timeout,
// the others succeed.
func seedRuns(t *testing.T, url, pipeline string, n int) {
	t.Helper()
	ctx := context.Background()
	c, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: url, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx, "seeder", []string{pipeline}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(ctx) }()
	start := time.Now().Add(-time.Duration(n+5) * time.Minute)
	for i := range n {
		end := start.Add(time.Duration(i) * time.Minute)
		if ok, err := c.TryAcquireLease(ctx, pipeline, runtime.RunNumberAuto); !ok || err != nil {
			t.Fatalf("acquire %s: %v %v", pipeline, ok, err)
		}
		rec := history.Record{PipelineID: pipeline, Start: end.Add(-time.Duration(1+i%5) * time.Second), End: end,
			Duration: time.Duration(1+i%5) * time.Second, Outcome: history.OutcomeSucceeded}
		if i%3 == 0 {
			rec.Outcome, rec.Error = history.OutcomeFailed, "extract: read timeout after 30s"
		}
		if err := c.FinishRun(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
}

var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite docs/img/dashboard.png from the browser test")
