package distributed

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora-etl/agora/runtime"
)

// TestCoordinatorFromEnvOffReadsNothing: with ModeOff a bad setting is
// not read, and the option only logs the mode when the pool starts (no
// coordinator: the pool's local one).
func TestCoordinatorFromEnvOffReadsNothing(t *testing.T) {
	setEnv(t, map[string]string{"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS": "soon"})
	opt, err := CoordinatorFromEnv(ModeOff)
	if opt == nil || err != nil {
		t.Fatalf("CoordinatorFromEnv(ModeOff) = %v, %v; want the start log, nil", opt != nil, err)
	}
}

// TestCoordinatorFromEnvAutoWithoutURLWarnsOnlyWhenThePoolRuns: without
// a URL there is no coordinator, and the warning that every replica runs
// every slot comes when a long-running pool starts, not when it is built
// (-help, pipelines) nor for RunNow (the run subcommand, agora run).
func TestCoordinatorFromEnvAutoWithoutURLWarnsOnlyWhenThePoolRuns(t *testing.T) {
	clearEnv(t)
	var built bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&built, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	opt, err := CoordinatorFromEnv(ModeAuto)
	if opt == nil || err != nil {
		t.Fatalf("CoordinatorFromEnv(ModeAuto) = %v, %v; want the start-log option", opt != nil, err)
	}
	var logs bytes.Buffer
	pool := runtime.NewWorkerPool(opt, runtime.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}})
	if err := pool.RunNow(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	const warning = "every one of them runs every slot"
	if strings.Contains(built.String()+logs.String(), warning) {
		t.Fatalf("warned before a long-running pool started:\n%s%s", built.String(), logs.String())
	}
	pool = runtime.NewWorkerPool(opt, runtime.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), runtime.WithSignalHandling(false)).
		Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}})
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Count(logs.String(), warning) != 1 || !strings.Contains(logs.String(), "AGORA_DISTRIBUTED_REDIS_URL") {
		t.Fatalf("Run logged:\n%s", logs.String())
	}
}

// singlePrefix checks every line of err starts with the package's one
// prefix and repeats no other.
func singlePrefix(t *testing.T, err error) {
	t.Helper()
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, "distributed: invalid configuration: ") || strings.Count(line, ": invalid configuration") != 1 || strings.Count(line, "distributed:") != 1 {
			t.Errorf("line %q does not carry exactly one prefix", line)
		}
	}
}

func TestCoordinatorFromEnvRequiredWithoutURL(t *testing.T) {
	clearEnv(t)
	opt, err := CoordinatorFromEnv(ModeRequired)
	if opt != nil || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("CoordinatorFromEnv(ModeRequired) = %v, %v; want ErrInvalidConfig", opt != nil, err)
	}
	if !strings.Contains(err.Error(), "AGORA_DISTRIBUTED_REDIS_URL is not set") || !strings.Contains(err.Error(), "distributed=required") {
		t.Errorf("error does not say what is missing and why: %v", err)
	}
	singlePrefix(t, err)
}

func TestCoordinatorFromEnvBadSettingsOnePrefix(t *testing.T) {
	for _, mode := range []Mode{ModeAuto, ModeRequired} {
		setEnv(t, map[string]string{
			"AGORA_DISTRIBUTED_REDIS_URL":          "redis://127.0.0.1:1",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL": "often",
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS":  "-5",
		})
		opt, err := CoordinatorFromEnv(mode)
		if opt != nil || !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("%v: got %v, %v; want ErrInvalidConfig", mode, opt != nil, err)
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 2 {
			t.Errorf("%v: want 2 problems, got %d:\n%v", mode, n, err)
		}
		singlePrefix(t, err)
	}
}

func TestCoordinatorFromEnvUnknownMode(t *testing.T) {
	clearEnv(t)
	if _, err := CoordinatorFromEnv(Mode(7)); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "mode 7") {
		t.Fatalf("CoordinatorFromEnv(7) = %v", err)
	}
}

// TestCoordinatorFromEnvWiresRedis runs a pool built with the option: its
// one run holds a Redis-fenced lease, which the in-process coordinator
// never grants.
func TestCoordinatorFromEnvWiresRedis(t *testing.T) {
	for _, mode := range []Mode{ModeAuto, ModeRequired} {
		mr := miniredis.RunT(t)
		setEnv(t, map[string]string{"AGORA_DISTRIBUTED_REDIS_URL": "redis://" + mr.Addr()})
		opt, err := CoordinatorFromEnv(mode)
		if err != nil || opt == nil {
			t.Fatalf("%v: CoordinatorFromEnv = %v, %v", mode, opt != nil, err)
		}
		var token int64
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		pool := runtime.NewWorkerPool(opt, runtime.WithLogger(quiet), runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: "once", Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					lease, _ := runtime.LeaseFromContext(ctx)
					token = lease.FencingToken
					return nil
				}), nil
			}})
		if err := pool.Run(context.Background()); err != nil {
			t.Fatalf("%v: Run: %v", mode, err)
		}
		if token <= 0 {
			t.Fatalf("%v: run's fencing token = %d, want a Redis token > 0", mode, token)
		}
		if keys := mr.Keys(); len(keys) == 0 {
			t.Fatalf("%v: nothing written to Redis", mode)
		}
	}
}

func TestModeString(t *testing.T) {
	for m, want := range map[Mode]string{ModeAuto: "auto", ModeRequired: "required", ModeOff: "off", Mode(9): "Mode(9)"} {
		if got := m.String(); got != want {
			t.Errorf("Mode(%d).String() = %q, want %q", int(m), got, want)
		}
	}
}
