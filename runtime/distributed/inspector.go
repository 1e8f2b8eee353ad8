package distributed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// ErrNotConfigured is wrapped by OpenInspector's error when the
// environment names no Redis (AGORA_DISTRIBUTED_REDIS_URL unset) and no URL
// was given.
var ErrNotConfigured = errors.New("distributed: no coordinator configured")

// ErrUnknownPipeline is runtime.ErrUnknownPipeline, the one sentinel for a
// pipeline id that names no known pipeline, kept under this name so that
// callers of either package match the same value with errors.Is. The
// Inspector's errors for a pipeline id no live worker runs wrap it; their
// message names the pipelines that are known.
var ErrUnknownPipeline = runtime.ErrUnknownPipeline

// ErrPipelinePaused is wrapped by Inspector.Trigger's error for a paused
// pipeline: resume it first.
var ErrPipelinePaused = errors.New("distributed: pipeline paused")

// inspectError is an Inspector error with a message of its own that wraps
// one of the sentinels above.
type inspectError struct {
	msg  string
	kind error
}

func (e *inspectError) Error() string { return e.msg }
func (e *inspectError) Unwrap() error { return e.kind }

// Inspector reads and steers a fleet of workers through their Redis, as
// the fleet CLI and dashboard do: the live workers, each pipeline's lease,
// schedule, next run and last outcome, the run history, the fleet-wide
// commands pause, resume and trigger, and the audit log of who gave them. It only connects: it registers no
// worker and takes no lease, so it can run anywhere that reaches the
// fleet's Redis. Every key it reads is the coordinator's own (registry,
// leases, control and history), under the same KeyPrefix.
//
// Its result types (WorkerInfo, LeaseInfo, PipelineInfo, PauseInfo,
// ControlResult, AuditEntry and history.Record) carry the JSON that "fleet ...
// --json" prints and the dashboard's /api/ pages serve. In that JSON times
// are RFC 3339 strings and durations integer nanoseconds, named with an
// "_ns" suffix (expires_in_ns, duration_ns).
//
// An Inspector is safe for concurrent use. Close it when done.
type Inspector struct {
	c *RedisWorkerCoordinator
}

// NewInspector connects to the fleet opts describes (RedisURL, KeyPrefix,
// RedlockRedisURLs, RunHistory and Clock matter; lease timings do not) and
// returns an Inspector over it. It fails when Redis cannot be reached.
// Errors are returned, never logged, unless opts.Logger is set.
func NewInspector(ctx context.Context, opts Options) (*Inspector, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		return nil, err
	}
	if err := c.Connect(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return &Inspector{c: c}, nil
}

// OpenInspector is NewInspector over the fleet the AGORA_DISTRIBUTED_*
// environment describes (LoadConfig), at redisURL instead of
// AGORA_DISTRIBUTED_REDIS_URL when redisURL is not "" (the fleet CLI's
// --redis flag). Its error wraps ErrNotConfigured when neither names a
// Redis. It logs through slog.Default: a key under the prefix that agora
// did not write is skipped with one WARN naming it.
func OpenInspector(ctx context.Context, redisURL string) (*Inspector, error) {
	cfg, err := LoadConfig()
	if err != nil {
		return nil, err
	}
	if redisURL != "" {
		cfg.RedisURL = redisURL
	}
	if cfg.RedisURL == "" {
		return nil, fmt.Errorf("%w: %s is not set (or give --redis URL)", ErrNotConfigured, envNames.RedisURL)
	}
	opts := cfg.Options()
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return NewInspector(ctx, opts)
}

// Close closes the Inspector's connections. Every later call fails with
// ErrClosed.
func (in *Inspector) Close() error { return in.c.Close() }

// PollInterval is how soon the replicas see a pause or a trigger
// (ControlPollInterval).
func (in *Inspector) PollInterval() time.Duration { return ControlPollInterval }

// now is the Inspector's clock (Options.Clock).
func (in *Inspector) now() time.Time { return in.c.clock.Now() }

// Workers returns the live workers (those whose record has not expired),
// sorted by id.
func (in *Inspector) Workers(ctx context.Context) ([]WorkerInfo, error) {
	return in.c.ListWorkers(ctx)
}

// LeaseInfo is a pipeline's lease as the Inspector reports it: what Redis
// holds (LeaseState, whose ExpiresIn is JSON expires_in_ns, integer
// nanoseconds) and whether the holder is a live worker.
type LeaseInfo struct {
	LeaseState
	// HolderAlive is true when the lease is held by a worker whose record
	// is live; a held lease whose holder is gone waits out its expiry, or
	// is taken over.
	HolderAlive bool `json:"holder_alive"`
}

// Leases returns the lease of each named pipeline, or of every pipeline a
// live worker runs (sorted) when none is named. A named pipeline no live
// worker runs is an error wrapping ErrUnknownPipeline.
func (in *Inspector) Leases(ctx context.Context, pipelineIDs ...string) ([]LeaseInfo, error) {
	ws, err := in.Workers(ctx)
	if err != nil {
		return nil, err
	}
	ids, _ := knownPipelines(ws)
	if len(pipelineIDs) > 0 {
		for _, id := range pipelineIDs {
			if !slices.Contains(ids, id) {
				return nil, unknownPipeline(id, ids)
			}
		}
		ids = pipelineIDs
	}
	return in.leaseInfos(ctx, ids, ws)
}

// leaseInfos reads the lease states of ids and marks the holders alive
// among ws.
func (in *Inspector) leaseInfos(ctx context.Context, ids []string, ws []WorkerInfo) ([]LeaseInfo, error) {
	states, err := in.c.LeaseStates(ctx, ids)
	if err != nil {
		return nil, err
	}
	alive := make(map[string]bool, len(ws))
	for _, w := range ws {
		alive[w.ID] = true
	}
	out := make([]LeaseInfo, len(states))
	for i, st := range states {
		out[i] = LeaseInfo{LeaseState: st, HolderAlive: st.Held && alive[st.Holder]}
	}
	return out, nil
}

// knownPipelines returns every pipeline id some live worker runs, sorted,
// and the workers running each.
func knownPipelines(ws []WorkerInfo) ([]string, map[string][]string) {
	by := map[string][]string{}
	for _, w := range ws {
		for _, id := range w.Pipelines {
			by[id] = append(by[id], w.ID)
		}
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, by
}

// checkKnown fails, wrapping ErrUnknownPipeline, unless a live worker runs
// id.
func (in *Inspector) checkKnown(ctx context.Context, id string) error {
	ws, err := in.Workers(ctx)
	if err != nil {
		return err
	}
	ids, _ := knownPipelines(ws)
	if !slices.Contains(ids, id) {
		return unknownPipeline(id, ids)
	}
	return nil
}

// unknownPipeline says that no live worker runs id.
func unknownPipeline(id string, known []string) error {
	msg := fmt.Sprintf("distributed: unknown pipeline %q: no live worker is registered", id)
	if len(known) > 0 {
		msg = fmt.Sprintf("distributed: unknown pipeline %q: no live worker runs it (known: %s)", id, strings.Join(known, ", "))
	}
	return &inspectError{msg: msg, kind: ErrUnknownPipeline}
}
