package distributed

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// A fleet of worker processes (this test binary, re-executed as
// TestStateLossHelperWorker) built the way a generated worker.go builds
// its pool: a Redis coordinator from Options and two pipelines every cron
// second. While replicas are killed, restarted and stopped past the lease
// TTL, and the Redis restarts empty, every slot runs at most once.

const (
	lossURLEnv    = "DISTRIBUTED_LOSS_URL"
	lossWorkerEnv = "DISTRIBUTED_LOSS_WORKER"
	// lossSoakEnv turns the soak version on (make soak), lossSoakRunsEnv
	// sets its number of 60 s runs.
	lossSoakEnv     = "AGORA_SOAK"
	lossSoakRunsEnv = "AGORA_SOAK_RUNS"
)

var lossFleetPipelines = []string{"a", "b"}

// TestStateLossFleetRunsEachSlotOnce is the short run: five replicas,
// a SIGKILL or a SIGSTOP every 4 s for 16 s, and one empty Redis restart.
func TestStateLossFleetRunsEachSlotOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 20 seconds")
	}
	runLossFleet(t, 16*time.Second)
}

// TestSoakStateLossFleet repeats the fleet for 60 s per run,
// AGORA_SOAK_RUNS times (default 10), with AGORA_SOAK=1.
func TestSoakStateLossFleet(t *testing.T) {
	if os.Getenv(lossSoakEnv) != "1" {
		t.Skipf("a soak test: set %s=1 (make soak)", lossSoakEnv)
	}
	runs := 10
	if v := os.Getenv(lossSoakRunsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of runs", lossSoakRunsEnv, v)
		}
		runs = n
	}
	for i := range runs {
		t.Run(fmt.Sprintf("run%d", i+1), func(t *testing.T) { runLossFleet(t, 60*time.Second) })
	}
}

// lossProc is one replica process and the runs it printed.
type lossProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

type lossRun struct {
	pipeline    string
	slot, token int64
	worker      string
}

// lossFleet starts replica processes on one redis-server and collects the
// runs they print.
type lossFleet struct {
	t    *testing.T
	srv  *redistest.Server
	mu   sync.Mutex
	runs []lossRun
}

// start starts the replica name; it is killed when the test ends.
func (f *lossFleet) start(name string) *lossProc {
	t := f.t
	cmd := exec.Command(os.Args[0], "-test.run=^TestStateLossHelperWorker$", "-test.count=1")
	cmd.Env = append(os.Environ(), lossURLEnv+"="+f.srv.URL(), lossWorkerEnv+"="+name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &lossProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r lossRun
			if n, _ := fmt.Sscanf(sc.Text(), "RUN %s %d %d", &r.pipeline, &r.slot, &r.token); n == 3 {
				r.worker = name
				f.mu.Lock()
				f.runs = append(f.runs, r)
				f.mu.Unlock()
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// count returns how many runs were printed so far.
func (f *lossFleet) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.runs)
}

// stopAll sends SIGINT to every replica and waits for them to end.
func (f *lossFleet) stopAll(procs []*lossProc) {
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			f.t.Fatal("a replica did not stop after SIGINT")
		}
	}
}

// checkOnce fails the test for every slot that ran more than once and
// returns how many slots ran.
func (f *lossFleet) checkOnce() (slots, dups int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bySlot := map[string][]lossRun{}
	for _, r := range f.runs {
		k := fmt.Sprintf("%s/%d", r.pipeline, r.slot)
		bySlot[k] = append(bySlot[k], r)
	}
	for k, rs := range bySlot {
		if len(rs) > 1 {
			dups++
			f.t.Errorf("slot %s ran %d times: %+v", k, len(rs), rs)
		}
	}
	return len(bySlot), dups
}

func runLossFleet(t *testing.T, faultsFor time.Duration) {
	srv := redistest.Start(t)
	f := &lossFleet{t: t, srv: srv}
	start := f.start
	procs := make([]*lossProc, 5)
	for i := range procs {
		procs[i] = start(fmt.Sprintf("w%d", i+1))
	}
	waitUntil(t, 30*time.Second, "the fleet's first runs", func() bool { return f.count() >= 4 })

	var stopped sync.WaitGroup
	restarts := 0
	begin := time.Now()
	for i := 0; time.Since(begin) < faultsFor; i++ {
		victim := i % len(procs)
		if i%2 == 0 {
			_ = procs[victim].cmd.Process.Kill()
			<-procs[victim].done
			procs[victim] = start(fmt.Sprintf("w%d-%d", victim+1, i))
		} else {
			p := procs[victim]
			_ = p.cmd.Process.Signal(syscall.SIGSTOP)
			stopped.Add(1)
			time.AfterFunc(4500*time.Millisecond, func() {
				defer stopped.Done()
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
			})
		}
		if i == 1 || (i > 1 && i%6 == 1) { // one restart per 24 s of faults
			time.Sleep(2 * time.Second)
			srv.Restart()
			restarts++
			time.Sleep(2 * time.Second)
		} else {
			time.Sleep(4 * time.Second)
		}
	}
	stopped.Wait()
	time.Sleep(2 * time.Second)
	f.stopAll(procs)
	slots, dups := f.checkOnce()
	t.Logf("%d runs over %d slots, %d empty Redis restarts: %d slots ran twice or more", f.count(), slots, restarts, dups)
	if slots < 10 {
		t.Fatalf("only %d slots ran", slots)
	}
}

// TestStateLossHelperWorker is not a test: the fleet tests run it in a
// child process as a replica.
func TestStateLossHelperWorker(t *testing.T) {
	url := os.Getenv(lossURLEnv)
	if url == "" {
		t.Skip("helper process for the fleet tests")
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	coord, err := NewRedisWorkerCoordinator(Options{
		RedisURL: url, LeaseTTL: 3 * time.Second, HeartbeatInterval: time.Second, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithWorkerID(os.Getenv(lossWorkerEnv)),
		runtime.WithLogger(quiet), runtime.WithGracefulShutdownTimeout(2*time.Second))
	var out sync.Mutex
	for _, id := range lossFleetPipelines {
		pool.Register(&runtime.ScheduledPipeline{
			PipelineID: id,
			Schedule:   runtime.MustCron("* * * * * *"),
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					lease, _ := runtime.LeaseFromContext(ctx)
					// Printed at the start: a run that began counts, even
					// if its process is killed before it ends.
					out.Lock()
					fmt.Printf("RUN %s %d %d\n", id, lease.RunNumber, lease.FencingToken)
					out.Unlock()
					select {
					case <-time.After(200 * time.Millisecond):
					case <-ctx.Done():
					}
					return nil
				}), nil
			},
		})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	_ = pool.Run(ctx)
}
