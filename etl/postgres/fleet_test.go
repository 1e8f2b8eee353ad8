package postgres

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// fleetEnv carries a fleet worker subprocess's settings.
const fleetEnv = "AGORA_PG_FLEET_WORKER"

type fleetWorker struct {
	Redis, Postgres, Name string
}

const fleetTTL = 700 * time.Millisecond

// runFleetWorker is one replica: a pool with a Redis coordinator and one
// pipeline on "* * * * * *" that, per slot, upserts the slot's row and
// appends to a log, both through fenced sinks on the same resource.
func runFleetWorker(t *testing.T, cfg fleetWorker) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, cfg.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := NewSink(pool, SinkConfig{Table: "slots", Mode: "upsert", Key: []string{"slot"}, Resource: "slots"})
	if err != nil {
		t.Fatal(err)
	}
	wlog, err := NewSink(pool, SinkConfig{Table: "writes", Resource: "slots"})
	if err != nil {
		t.Fatal(err)
	}
	coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{RedisURL: cfg.Redis, LeaseTTL: fleetTTL, HeartbeatInterval: fleetTTL / 4})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	slog.SetDefault(logger)
	wp := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithWorkerID(cfg.Name),
		runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithLogger(logger), runtime.WithGracefulShutdownTimeout(time.Second))
	wp.Register(&runtime.ScheduledPipeline{
		PipelineID:   "slots",
		Schedule:     runtime.MustCron("* * * * * *"),
		ErrorBackoff: 100 * time.Millisecond,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				lease, _ := runtime.LeaseFromContext(ctx)
				fmt.Printf("RUN %d %d\n", lease.RunNumber, lease.FencingToken)
				// Work before the write, where a pause or a kill can land.
				time.Sleep(300 * time.Millisecond)
				rec := []etl.Record{{"slot": lease.RunNumber, "token": lease.FencingToken, "worker": cfg.Name}}
				// The write ignores the run's cancellation, like a write
				// already on its way when the lease was lost: only fencing
				// stands between it and the table.
				wctx := context.WithoutCancel(ctx)
				if err := wlog.Write(wctx, rec); err != nil {
					return err
				}
				return slots.Write(wctx, rec)
			}), nil
		},
	})
	fmt.Println("fleet worker started")
	t.Fatal(wp.Run(ctx))
}

type fleetProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	runs chan string // RUN lines
}

// TestFleetChaosUpsertsEachSlotOnce runs three replicas, each a subprocess
// with a real Redis coordinator, writing every cron second into one
// PostgreSQL table, while one replica is stopped past the lease TTL and
// another is killed and restarted. Every slot has exactly one row, written
// by its newest token; the log of accepted writes never has a token below
// an earlier accepted one.
func TestFleetChaosUpsertsEachSlotOnce(t *testing.T) {
	if v := os.Getenv(fleetEnv); v != "" {
		var cfg fleetWorker
		if err := json.Unmarshal([]byte(v), &cfg); err != nil {
			t.Fatal(err)
		}
		runFleetWorker(t, cfg)
		return
	}
	if testing.Short() {
		t.Skip("runs a fleet for about 7 seconds")
	}
	redis := redistest.Start(t)
	pool, url := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE slots (slot bigint PRIMARY KEY, token bigint NOT NULL, worker text NOT NULL)")
	db.Exec(t, "CREATE TABLE writes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, slot bigint NOT NULL, token bigint NOT NULL, worker text NOT NULL)")

	var refused atomic.Int64
	var mu sync.Mutex
	var logs strings.Builder
	start := func(name string) *fleetProc {
		cfg, _ := json.Marshal(fleetWorker{Redis: redis.URL(), Postgres: url, Name: name})
		p := &fleetProc{name: name, done: make(chan struct{})}
		p.cmd = exec.Command(os.Args[0], "-test.run=^TestFleetChaosUpsertsEachSlotOnce$", "-test.count=1")
		p.cmd.Env = append(os.Environ(), fleetEnv+"="+string(cfg))
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stderr, err := p.cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		p.runs = make(chan string, 100)
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "RUN ") {
					select {
					case p.runs <- sc.Text():
					default:
					}
				}
			}
			io.Copy(io.Discard, stdout)
		}()
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				line := sc.Text()
				if strings.Contains(line, "stale writer refused") {
					refused.Add(1)
				}
				mu.Lock()
				fmt.Fprintf(&logs, "%s| %s\n", name, line)
				mu.Unlock()
			}
			p.cmd.Wait()
			close(p.done)
		}()
		return p
	}
	procs := []*fleetProc{start("w1"), start("w2"), start("w3")}
	t.Cleanup(func() {
		for _, p := range procs {
			p.cmd.Process.Signal(syscall.SIGCONT)
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	began := time.Now()
	time.Sleep(1200 * time.Millisecond)
	// Stop the replica that has just started a run, in the middle of it,
	// past the lease TTL and past the next owner's first write, as a long
	// GC pause or a frozen VM would; then let it go on and write.
	for i := range procs {
		drain(procs[i].runs)
	}
	stopped := waitRun(t, procs, 10*time.Second)
	procs[stopped].cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(fleetTTL + 1800*time.Millisecond)
	procs[stopped].cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(500 * time.Millisecond)
	// Kill another one outright in the middle of a run, and start a
	// replacement.
	for i := range procs {
		drain(procs[i].runs)
	}
	killed := waitRun(t, procs, 10*time.Second)
	procs[killed].cmd.Process.Kill()
	<-procs[killed].done
	procs[killed] = start(procs[killed].name + "b")
	time.Sleep(1500 * time.Millisecond)
	for _, p := range procs {
		p.cmd.Process.Kill()
		<-p.done
	}
	elapsed := time.Since(began)

	tokens := db.Ints(t, "SELECT token FROM writes ORDER BY id")
	if !slices.IsSorted(tokens) {
		mu.Lock()
		t.Logf("worker logs:\n%s", logs.String())
		mu.Unlock()
		t.Fatalf("a write with a lower token was accepted after a higher one: %v", tokens)
	}
	slotsN := db.Ints(t, "SELECT count(*) FROM slots")[0]
	logged := db.Ints(t, "SELECT count(DISTINCT slot) FROM writes")[0]
	if slotsN != logged {
		t.Fatalf("%d slots in the table, %d slots written", slotsN, logged)
	}
	if bad := db.Ints(t, `SELECT count(*) FROM slots s WHERE s.token <> (SELECT max(token) FROM writes w WHERE w.slot = s.slot)`)[0]; bad != 0 {
		t.Fatalf("%d slots hold a row from other than their newest token", bad)
	}
	if min := int64(elapsed/time.Second) / 2; slotsN < min {
		mu.Lock()
		t.Logf("worker logs:\n%s", logs.String())
		mu.Unlock()
		t.Fatalf("only %d slots written in %s", slotsN, elapsed.Round(time.Second))
	}
	if refused.Load() == 0 {
		mu.Lock()
		t.Logf("worker logs:\n%s", logs.String())
		mu.Unlock()
		t.Errorf("the replica stopped mid-run was not refused when it went on writing")
	}
	again := db.Ints(t, "SELECT count(*) FROM (SELECT slot FROM writes GROUP BY slot HAVING count(*) > 1) d")[0]
	t.Logf("%d slots in %s, %d writes, %d slots written twice (a retry after a kill or a lost lease), %d stale writes refused",
		slotsN, elapsed.Round(time.Millisecond), len(tokens), again, refused.Load())
}

// waitRun returns the index of the first replica to start a run.
func waitRun(t *testing.T, procs []*fleetProc, timeout time.Duration) int {
	t.Helper()
	deadline := time.After(timeout)
	for {
		for i, p := range procs {
			select {
			case <-p.runs:
				return i
			default:
			}
		}
		select {
		case <-deadline:
			t.Fatal("no replica started a run")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func drain(ch chan string) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
