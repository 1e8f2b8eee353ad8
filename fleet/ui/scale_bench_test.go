package ui_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/fleet/ui"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
)

// The dashboard at scale, as issue 29 measured it: 1,000 pipelines with
// 100 failed runs each (2 KB errors) in a real redis-server, four live
// workers. Samples per measurement: AGORA_BENCH_SAMPLES (default 30).
const (
	scalePipelines = 1000
	scaleRuns      = 100
	scaleWorkers   = 4
	scaleErrorLen  = 2048
)

func BenchmarkDashboardAtScale(b *testing.B) {
	samples := 30
	if s, err := strconv.Atoi(os.Getenv("AGORA_BENCH_SAMPLES")); err == nil && s > 0 {
		samples = s
	}
	srv := redistest.Start(b)
	seedScaleFleet(b, srv.URL())
	in, err := distributed.NewInspector(context.Background(), distributed.Options{RedisURL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Close() })
	web := httptest.NewServer(ui.NewHandler(in, ui.Options{}))
	b.Cleanup(web.Close)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = rdb.Close() })
	client := &http.Client{Timeout: 2 * time.Minute}

	for _, pg := range []struct{ name, path string }{{"front", "/"}, {"pipeline", "/pipelines/p0500"}} {
		b.Run(pg.name, func(b *testing.B) {
			var lat []time.Duration
			size, failed := 0, 0
			for range samples {
				d, n, code := fetch(client, web.URL+pg.path)
				if code != 200 {
					failed++ // the dashboard before issue 29 answered 502 here
				} else {
					size = n
				}
				lat = append(lat, d)
			}
			b.ReportMetric(ms(pct(lat, 50)), "p50-ms")
			b.ReportMetric(ms(pct(lat, 99)), "p99-ms")
			b.ReportMetric(float64(size)/1024, "KB")
			b.ReportMetric(float64(failed), "non-200")
		})
	}
	// 10 readers of the front and pipeline pages; and, as a control, 10
	// readers of the stylesheet, which costs Redis nothing: on a small
	// machine the readers' CPU alone delays PING (the client shares the
	// process), and the control shows how much.
	for _, rd := range []struct {
		name   string
		static bool
	}{{"10-readers", false}, {"10-readers-control", true}} {
		b.Run(rd.name, func(b *testing.B) {
			idle := pings(b, rdb, 200, nil)
			stop := make(chan struct{})
			var busy []time.Duration
			pinged := make(chan struct{})
			go func() { busy = pings(b, rdb, 0, stop); close(pinged) }()
			probe := startPingProbe(b, srv.Addr())
			cpu0, wall0 := redisCPU(b, rdb), time.Now()
			var mu sync.Mutex
			var lat []time.Duration
			bad := 0
			var wg sync.WaitGroup
			for r := range 10 {
				wg.Go(func() {
					for i := range max(samples/3, 2) {
						path := "/"
						if (r+i)%2 == 1 {
							path = fmt.Sprintf("/pipelines/p%04d", (r*97+i*13)%scalePipelines)
						}
						if rd.static {
							path = "/static/style.css"
						}
						d, _, code := fetch(client, web.URL+path)
						mu.Lock()
						lat = append(lat, d)
						if code >= 500 || code == 0 {
							bad++
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			// Redis's own CPU over the phase: how busy the readers kept it.
			b.ReportMetric(100*(redisCPU(b, rdb)-cpu0)/time.Since(wall0).Seconds(), "redis-cpu-%")
			close(stop)
			<-pinged
			b.ReportMetric(ms(pct(lat, 99)), "p99-ms")
			b.ReportMetric(float64(bad), "5xx")
			b.ReportMetric(ms(pct(idle, 99)), "ping-idle-p99-ms")
			b.ReportMetric(ms(pct(busy, 99)), "ping-p99-ms")
			b.ReportMetric(probe(), "ping-proc-p99-ms")
		})
	}
}

// redisCPU is the CPU seconds the Redis server has used (INFO cpu: user
// and system, its main thread and the others).
func redisCPU(b *testing.B, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, line := range strings.Split(info, "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO cpu %s: %v", line, err)
			}
			total += f
		}
	}
	return total
}

// pingProbeEnv makes the test binary a PING probe (TestPingProbe): a
// process of its own, so its pings do not wait for this one's busy
// scheduler, as a worker's commands would not.
const pingProbeEnv = "AGORA_BENCH_PING_PROBE"

// startPingProbe starts the probe against addr; the function it returns
// stops it and returns its PING p99 in ms.
func startPingProbe(b *testing.B, addr string) func() float64 {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPingProbe$")
	cmd.Env = append(os.Environ(), pingProbeEnv+"="+addr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return func() float64 {
		stdin.Close()
		_ = cmd.Wait()
		for _, line := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "ping-p99-ms "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		b.Errorf("the ping probe printed no p99: %q", out.String())
		return 0
	}
}

// TestPingProbe pings Redis every 5 ms until its stdin closes, then prints
// the p99; it runs only as startPingProbe's child.
func TestPingProbe(t *testing.T) {
	addr := os.Getenv(pingProbeEnv)
	if addr == "" {
		t.Skip("runs only as the benchmark's ping probe")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	d := pings(nil, rdb, 0, stop)
	fmt.Printf("ping-p99-ms %.3f\n", ms(pct(d, 99)))
}

// fetch GETs u and returns how long it took, the body's size and the
// status (0 when the request failed).
func fetch(c *http.Client, u string) (time.Duration, int, int) {
	start := time.Now()
	resp, err := c.Get(u)
	if err != nil {
		return time.Since(start), 0, 0
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start), int(n), resp.StatusCode
}

// pings measures PING round trips: n of them, or until stop closes.
func pings(_ *testing.B, rdb *redis.Client, n int, stop chan struct{}) []time.Duration {
	var out []time.Duration
	for i := 0; n == 0 || i < n; i++ {
		if stop != nil {
			select {
			case <-stop:
				return out
			default:
			}
		}
		start := time.Now()
		_ = rdb.Ping(context.Background()).Err() // a timeout counts as its wait
		out = append(out, time.Since(start))
		time.Sleep(5 * time.Millisecond)
	}
	return out
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// seedScaleFleet registers the workers, each running a quarter of the
// pipelines, and records scaleRuns failed runs of every pipeline through
// the coordinators, in batches (one acquire batch and concurrent finishes
// per worker and round).
func seedScaleFleet(b *testing.B, url string) {
	b.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	errText := "load: " + strings.Repeat("connection reset by peer; ", scaleErrorLen/26+1)
	errText = errText[:scaleErrorLen]
	base := time.Now().Add(-time.Duration(scaleRuns+1) * time.Minute)
	var wg sync.WaitGroup
	for w := range scaleWorkers {
		var ids []string
		for p := w; p < scalePipelines; p += scaleWorkers {
			ids = append(ids, fmt.Sprintf("p%04d", p))
		}
		c, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: url, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		c.SetSchedules(map[string]string{ids[0]: `cron="*/5 * * * *"`})
		if err := c.Start(ctx, fmt.Sprintf("worker-%d", w), ids); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for i := range scaleRuns {
				end := base.Add(time.Duration(i) * time.Minute)
				reqs := make([]runtime.LeaseRequest, len(ids))
				for k, id := range ids {
					reqs[k] = runtime.LeaseRequest{PipelineID: id, RunNumber: end.Unix()}
				}
				for k, rep := range c.TryAcquireLeases(ctx, reqs) {
					if !rep.Acquired || rep.Err != nil {
						b.Errorf("acquire %s run %d: %+v", ids[k], i, rep)
						return
					}
				}
				var fw sync.WaitGroup
				for _, id := range ids {
					fw.Go(func() {
						d := time.Duration(1+len(id)%7+i%13) * time.Second
						rec := history.Record{PipelineID: id, Start: end.Add(-d), End: end, Duration: d,
							Outcome: history.OutcomeFailed, Error: errText}
						if err := c.FinishRun(ctx, rec); err != nil {
							b.Errorf("finish %s: %v", id, err)
						}
					})
				}
				fw.Wait()
			}
		})
	}
	wg.Wait()
}
