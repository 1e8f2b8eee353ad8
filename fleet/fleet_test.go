package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
)

// oneReplica starts a Redis, points AGORA_DISTRIBUTED_REDIS_URL at it,
// runs one replica of the test fleet on it and returns a client of its
// own for writing keys as something other than agora would, closed when
// the test ends.
func oneReplica(t *testing.T) *redis.Client {
	t.Helper()
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 1, &runs, &mu)
	opts, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(opts)
	t.Cleanup(func() { _ = admin.Close() })
	return admin
}

// replicas starts n worker pools on srv, each running "orders" (hourly
// cron, counting its runs) and "events" (continuous, holding its lease
// until shutdown).
func replicas(t *testing.T, srv *redistest.Server, n int, ordersRuns *int32, mu *sync.Mutex) []*runtime.WorkerPool {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var pools []*runtime.WorkerPool
	for i := range n {
		coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: srv.URL(), LeaseTTL: 5 * time.Second, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = coord.Close() })
		pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithLogger(quiet),
			runtime.WithWorkerID([]string{"replica-a", "replica-b", "replica-c"}[i]), runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "orders", Schedule: runtime.MustCron("0 * * * *"),
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(context.Context) error {
						mu.Lock()
						*ordersRuns++
						mu.Unlock()
						return nil
					}), nil
				}}).
			Register(&runtime.ScheduledPipeline{PipelineID: "events", Schedule: runtime.Continuous(),
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(ctx context.Context) error {
						<-runtime.ShutdownRequested(ctx)
						return nil
					}), nil
				}})
		wg.Go(func() { _ = pool.Run(ctx) })
		<-pool.Started()
		pools = append(pools, pool)
	}
	return pools
}

// run runs a fleet command and returns its exit status and outputs.
func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := fleet.Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// aligned checks that every row's cells start where the header's do.
func aligned(t *testing.T, table string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	// Columns are counted in runes, as a terminal shows them (a duration
	// may read 73µs).
	header := []rune(lines[0])
	var starts []int
	for i := range header {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ' && i > 1 && header[i-2] == ' ') {
			starts = append(starts, i)
		}
	}
	var rows [][]string
	for _, text := range lines[1:] {
		line := []rune(text)
		var cells []string
		for k, s := range starts {
			if s >= len(line) || line[s] == ' ' || (s > 0 && line[s-1] != ' ') {
				t.Fatalf("row %q not aligned with header %q at column %d", text, lines[0], k)
			}
			end := len(line)
			if k+1 < len(starts) {
				end = min(starts[k+1], len(line))
			}
			cells = append(cells, strings.TrimSpace(string(line[s:end])))
		}
		rows = append(rows, cells)
	}
	return rows
}

func TestFleetCommandsAgainstRealReplicas(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", srv.URL())
	var runs int32
	var mu sync.Mutex
	replicas(t, srv, 2, &runs, &mu)
	ordersRuns := func() int32 { mu.Lock(); defer mu.Unlock(); return runs }

	// workers
	code, out, errOut := run("workers")
	if code != 0 {
		t.Fatalf("workers: exit %d: %s", code, errOut)
	}
	rows := aligned(t, out)
	if !strings.HasPrefix(out, "WORKER ") || !strings.Contains(out, "  HEARTBEAT\n") || len(rows) != 2 || rows[0][0] != "replica-a" || rows[1][0] != "replica-b" ||
		rows[0][4] != "orders,events" || !strings.HasSuffix(rows[0][6], "s ago") {
		t.Fatalf("workers table:\n%s", out)
	}
	code, out, _ = run("workers", "--json")
	var ws []distributed.WorkerInfo
	if err := json.Unmarshal([]byte(out), &ws); code != 0 || err != nil || len(ws) != 2 || ws[0].Schedules["orders"] != `cron="0 * * * *"` {
		t.Fatalf("workers --json: %d %v %s", code, err, out)
	}

	// leases: events is held by one replica, orders by none.
	var leases []struct {
		PipelineID   string `json:"pipeline_id"`
		Held         bool   `json:"held"`
		Holder       string `json:"holder"`
		HolderAlive  bool   `json:"holder_alive"`
		FencingToken int64  `json:"fencing_token"`
		ExpiresInNs  int64  `json:"expires_in_ns"`
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, out, _ = run("leases", "--json")
		leases = leases[:0]
		if err := json.Unmarshal([]byte(out), &leases); code != 0 || err != nil {
			t.Fatalf("leases --json: %d %v %s", code, err, out)
		}
		if len(leases) == 2 && leases[0].Held || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(leases) != 2 || leases[0].PipelineID != "events" || !leases[0].Held || !leases[0].HolderAlive ||
		!strings.HasPrefix(leases[0].Holder, "replica-") || leases[0].FencingToken <= 0 || leases[0].ExpiresInNs <= 0 || leases[0].ExpiresInNs > int64(5*time.Second) ||
		leases[1].PipelineID != "orders" || leases[1].Held {
		t.Fatalf("leases: %+v", leases)
	}
	code, out, _ = run("leases")
	rows = aligned(t, out)
	if code != 0 || rows[0][0] != "events" || rows[0][2] != "yes" || rows[1][1] != "-" {
		t.Fatalf("leases table:\n%s", out)
	}

	// pipelines
	code, out, _ = run("pipelines")
	rows = aligned(t, out)
	next := time.Now().UTC().Truncate(time.Hour).Add(time.Hour).Format(time.RFC3339)
	if code != 0 || len(rows) != 2 || rows[1][0] != "orders" || rows[1][1] != `cron="0 * * * *"` || rows[1][2] != "2" ||
		rows[1][4] != next || rows[1][5] != "-" || rows[1][7] != "no" || rows[0][1] != "continuous" {
		t.Fatalf("pipelines table (want next fire %s):\n%s", next, out)
	}

	// pause, trigger refused while paused, resume, trigger.
	if code, out, errOut = run("pause", "orders"); code != 0 || !strings.Contains(out, "paused orders") {
		t.Fatalf("pause: %d %s %s", code, out, errOut)
	}
	code, out, _ = run("pipelines", "--json")
	var ps []struct {
		PipelineID string `json:"pipeline_id"`
		Paused     bool   `json:"paused"`
		PausedBy   string `json:"paused_by"`
	}
	if err := json.Unmarshal([]byte(out), &ps); code != 0 || err != nil || len(ps) != 2 || !ps[1].Paused || ps[1].PausedBy == "" {
		t.Fatalf("pipelines --json after pause: exit %d, %v %s", code, err, out)
	}
	if code, _, errOut = run("trigger", "orders"); code != 1 || !strings.Contains(errOut, "paused; resume it first") {
		t.Fatalf("trigger while paused: %d %s", code, errOut)
	}
	if code, out, _ = run("resume", "orders", "--json"); code != 0 || !strings.Contains(out, `"changed": true`) {
		t.Fatalf("resume: %d %s", code, out)
	}
	if code, out, _ = run("resume", "orders"); code != 0 || !strings.Contains(out, "was not paused") {
		t.Fatalf("second resume: %d %s", code, out)
	}
	if code, out, errOut = run("trigger", "orders"); code != 0 || !strings.Contains(out, "triggered orders") {
		t.Fatalf("trigger: %d %s %s", code, out, errOut)
	}
	deadline = time.Now().Add(3 * time.Second)
	for ordersRuns() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(1200 * time.Millisecond) // the other replica polls too, at least once
	if n := ordersRuns(); n != 1 {
		t.Fatalf("orders ran %d times after one trigger, want 1", n)
	}

	// The triggered run is in the fleet's run history, and in pipelines.
	code, out, _ = run("runs", "orders", "--json")
	var recs []history.Record
	if err := json.Unmarshal([]byte(out), &recs); code != 0 || err != nil || len(recs) != 1 {
		t.Fatalf("runs orders --json: exit %d, %v, %s", code, err, out)
	}
	if r := recs[0]; r.Outcome != history.OutcomeSucceeded || !r.Triggered || !strings.HasPrefix(r.WorkerID, "replica-") ||
		r.FencingToken <= 0 || r.End.Before(r.Start) || r.PipelineID != "orders" {
		t.Fatalf("the triggered run's record: %+v", r)
	}
	code, out, _ = run("runs")
	rows = aligned(t, out)
	if code != 0 || len(rows) != 1 || rows[0][0] != "orders" || rows[0][7] != "succeeded" || rows[0][11] != "triggered" {
		t.Fatalf("runs table:\n%s", out)
	}
	if code, out, _ = run("runs", "--failed"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("runs --failed after a success: exit %d\n%s", code, out)
	}
	code, out, _ = run("pipelines")
	rows = aligned(t, out)
	if code != 0 || rows[1][5] != "succeeded" || rows[1][6] == "-" {
		t.Fatalf("pipelines after a run:\n%s", out)
	}
	for _, args := range [][]string{{"runs", "a", "b"}, {"runs", "--limit", "-1"}, {"runs", "--since", "soon"}} {
		if code, _, errOut := run(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %s", args, code, errOut)
		}
	}

	// Unknown pipelines and usage errors.
	for _, args := range [][]string{{"pause", "nope"}, {"trigger", "nope"}, {"resume", "nope"}, {"leases", "nope"}} {
		if code, _, errOut := run(args...); code != 1 || !strings.Contains(errOut, `unknown pipeline "nope"`) || !strings.Contains(errOut, "events, orders") {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
	for _, args := range [][]string{nil, {"launch"}, {"pause"}, {"pause", "a", "b"}, {"workers", "x"}, {"workers", "--yaml"}} {
		if code, _, errOut := run(args...); code != 2 || !strings.Contains(errOut, "usage: fleet") {
			t.Errorf("%v: exit %d, want 2 with usage; stderr %s", args, code, errOut)
		}
	}
	if code, out, _ := run("help"); code != 0 || !strings.Contains(out, "trigger ID") {
		t.Errorf("help: %d %s", code, out)
	}
}

func TestFleetExitsOneWithoutRedis(t *testing.T) {
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "")
	if code, _, errOut := run("workers"); code != 1 || !strings.Contains(errOut, "AGORA_DISTRIBUTED_REDIS_URL is not set") {
		t.Fatalf("unset: exit %d, %s", code, errOut)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	t.Setenv("AGORA_DISTRIBUTED_REDIS_URL", "redis://:s3cret@"+addr+"/0")
	code, _, errOut := run("leases")
	if code != 1 || !strings.Contains(errOut, "connect to") || strings.Contains(errOut, "s3cret") {
		t.Fatalf("unreachable: exit %d, %s", code, errOut)
	}
}
