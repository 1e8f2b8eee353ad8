// Command demo runs the etl example as a small fleet: it builds the worker,
// starts a Redis on a free loopback port (redis-server when installed,
// otherwise an in-process miniredis), starts three replicas against it, and
// prints, for every run, which replica ran which slot with which fencing
// token. After the time given by -duration, or at Ctrl+C, it stops
// everything it started and prints a summary per slot. Last, it replays
// the load of an early run with that run's now stale fencing token into the
// SQLite warehouse the replicas loaded, and shows the warehouse refusing
// it. make run runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/agora-etl/agora/examples/etl"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	// Replicas' log readers print while the main goroutine does.
	stdout, stderr = &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 30*time.Second, "how long the replicas run")
	replicas := fs.Int("replicas", 3, "how many replicas to start")
	worker := fs.String("worker", "", "worker binary to run (default: build ./examples/etl/cmd/etl-worker)")
	useMiniredis := fs.Bool("miniredis", false, "use the in-process miniredis even when redis-server is installed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *replicas < 1 || *duration <= 0 {
		fmt.Fprintln(stderr, "demo: -replicas and -duration must be positive")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	tmp, err := os.MkdirTemp("", "agora-demo-")
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	bin := *worker
	if bin == "" {
		bin = filepath.Join(tmp, "etl-worker")
		fmt.Fprintln(stdout, "building the example worker...")
		if err := buildWorker(ctx, bin); err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return 1
		}
	}
	redis, err := startRedis(ctx, tmp, *useMiniredis)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	defer redis.Stop()
	fmt.Fprintf(stdout, "redis: %s on %s\n", redis.Kind, redis.Addr)

	// Every replica loads the same SQLite warehouse.
	warehouse := filepath.Join(tmp, "warehouse.db")
	os.Setenv(etl.WarehouseEnv, warehouse)

	report := newReport(stdout)
	fleet, err := startFleet(bin, *replicas, "redis://"+redis.Addr+"/0", report, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "started %d replicas for %s (Ctrl+C stops earlier)\n\n", *replicas, *duration)
	report.header()

	timer := time.NewTimer(*duration)
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "\ninterrupted")
	case <-timer.C:
	case err := <-fleet.Exited():
		fmt.Fprintf(stderr, "demo: a replica exited early: %v\n", err)
	}
	timer.Stop()
	fmt.Fprintln(stdout, "\nstopping the replicas...")
	codes := fleet.Stop(20 * time.Second)
	report.summary()
	if err := staleWriterScene(stdout, report, warehouse); err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	for i, code := range codes {
		if code != 0 {
			fmt.Fprintf(stderr, "demo: replica-%d exited with %d\n", i+1, code)
			return 1
		}
	}
	if report.duplicates() > 0 {
		return 1
	}
	return 0
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
