package distributed

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/agora-etl/agora/fleet"
	// The dashboard "fleet ui" serves, in every binary with the fleet
	// command.
	_ "github.com/agora-etl/agora/fleet/ui"
	"github.com/agora-etl/agora/runtime"
)

// Linking this package in (every generated worker.go does) gives the
// binary the "fleet" subcommand, backed by the Redis coordinator, and puts
// the AGORA_DISTRIBUTED_* variables in its -help.
func init() {
	fleet.RegisterBackend(OpenFleet)
	runtime.RegisterCommand(runtime.Command{
		Name:    "fleet",
		Summary: "inspect and steer the fleet: workers, leases, pipelines, pause ID, resume ID, trigger ID (fleet -h)",
		Run:     fleet.Run,
	})
	runtime.RegisterHelp(runtime.HelpSection{Title: "Environment (runtime/distributed)", Body: envHelp()})
}

// envHelp lists the AGORA_DISTRIBUTED_* variables for -help.
func envHelp() string {
	var b strings.Builder
	for _, v := range []struct{ name, what string }{
		{envNames.RedisURL, "Redis URL shared by the replicas (redis://, rediss://, unix://); unset: this replica coordinates with no other"},
		{envNames.LeaseTTL, "lease lifetime in seconds (default 300)"},
		{envNames.HeartbeatInterval, "worker heartbeat and lease renewal interval in seconds (default 30)"},
		{envNames.KeyPrefix, `Redis key prefix (default "agora:distributed:")`},
		{EnvPrefix + "_FALLBACK_TO_LOCAL", "true: run on unfenced local leases while Redis is down (default false: fail safe)"},
		{envNames.FencingKeyTTL, "expiry of fencing-token and completed-slot keys in seconds (default: never)"},
		{envNames.LeaseRenewalDeadline, "give a lease up locally when not renewed for this many seconds"},
		{envNames.RedlockRedisURLs, "Redlock quorum: JSON array or comma-separated list of at least 3 Redis URLs"},
		{envNames.RedlockClockDriftFactor, "Redlock clock drift factor (default 0.01)"},
		{EnvPrefix + "_RUN_HISTORY", "run history kept per pipeline: RUNS[,MAX_AGE] (default 100,168h) or off"},
	} {
		fmt.Fprintf(&b, "  %s\n      %s\n", v.name, v.what)
	}
	return b.String()
}

// OpenFleet connects, read-only, to the fleet the AGORA_DISTRIBUTED_*
// environment describes, at redisURL instead of AGORA_DISTRIBUTED_REDIS_URL
// when it is not "": the fleet package's Backend over Redis.
func OpenFleet(ctx context.Context, redisURL string) (fleet.Backend, error) {
	cfg, err := LoadConfig()
	if err != nil {
		return nil, err
	}
	if redisURL != "" {
		cfg.RedisURL = redisURL
	}
	if cfg.RedisURL == "" {
		return nil, fmt.Errorf("%w: %s is not set (or give --redis URL)", fleet.ErrNotConfigured, envNames.RedisURL)
	}
	opts := cfg.Options()
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) // errors are returned, not logged
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		return nil, err
	}
	if err := c.Connect(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return fleetBackend{c}, nil
}

// fleetBackend adapts a connected coordinator to fleet.Backend.
type fleetBackend struct{ c *RedisWorkerCoordinator }

func (b fleetBackend) Workers(ctx context.Context) ([]fleet.Worker, error) {
	ws, err := b.c.ListWorkers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]fleet.Worker, len(ws))
	for i, w := range ws {
		out[i] = fleet.Worker{ID: w.ID, Host: w.Host, PID: w.PID, Version: w.Version, Pipelines: w.Pipelines,
			Schedules: w.Schedules, StartedAt: w.StartedAt, LastHeartbeat: w.LastHeartbeat}
	}
	return out, nil
}

func (b fleetBackend) LeaseStates(ctx context.Context, ids []string) ([]fleet.LeaseState, error) {
	sts, err := b.c.LeaseStates(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]fleet.LeaseState, len(sts))
	for i, s := range sts {
		out[i] = fleet.LeaseState(s)
	}
	return out, nil
}

func (b fleetBackend) PausedPipelines(ctx context.Context) (map[string]fleet.PauseInfo, error) {
	m, err := b.c.PausedPipelines(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]fleet.PauseInfo, len(m))
	for id, p := range m {
		out[id] = fleet.PauseInfo(p)
	}
	return out, nil
}

func (b fleetBackend) Runs(ctx context.Context, ids []string, limit int) ([][]runtime.RunRecord, error) {
	return b.c.RunHistories(ctx, ids, limit)
}

func (b fleetBackend) Pause(ctx context.Context, id, by string) error { return b.c.Pause(ctx, id, by) }

func (b fleetBackend) Resume(ctx context.Context, id string) (bool, error) {
	return b.c.Resume(ctx, id)
}

func (b fleetBackend) Trigger(ctx context.Context, id string) error { return b.c.Trigger(ctx, id) }

func (b fleetBackend) PollInterval() time.Duration { return ControlPollInterval }

func (b fleetBackend) Close() error { return b.c.Close() }
