package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Worker is one live worker's registry record.
type Worker struct {
	ID            string            `json:"id"`
	Host          string            `json:"host"`
	PID           int               `json:"pid"`
	Version       string            `json:"version"`
	Pipelines     []string          `json:"pipelines"`
	Schedules     map[string]string `json:"schedules,omitempty"`
	StartedAt     time.Time         `json:"started_at"`
	LastHeartbeat time.Time         `json:"last_heartbeat"`
}

// LeaseState is what the coordinator's store holds for one pipeline.
type LeaseState struct {
	PipelineID    string        `json:"pipeline_id"`
	Held          bool          `json:"held"`
	Holder        string        `json:"holder,omitempty"`
	FencingToken  int64         `json:"fencing_token"`
	RunNumber     int64         `json:"run_number"`
	ExpiresIn     time.Duration `json:"expires_in_ns"`
	LastToken     int64         `json:"last_token"`
	LastCompleted int64         `json:"last_completed"`
	OnceCompleted bool          `json:"once_completed"`
}

// PauseInfo says who paused a pipeline and when.
type PauseInfo struct {
	At time.Time `json:"at"`
	By string    `json:"by,omitempty"`
}

// Backend is the fleet's shared state, as the commands read and change it.
// runtime/distributed implements it over Redis and registers it with
// RegisterBackend.
type Backend interface {
	// Workers lists the live workers (those whose record has not expired).
	Workers(ctx context.Context) ([]Worker, error)
	// LeaseStates reads the lease state of each pipeline.
	LeaseStates(ctx context.Context, pipelineIDs []string) ([]LeaseState, error)
	// PausedPipelines returns the fleet-wide pause flags.
	PausedPipelines(ctx context.Context) (map[string]PauseInfo, error)
	// Runs reads the run history of each pipeline, newest first, at most
	// limit runs each (<= 0: all that are kept).
	Runs(ctx context.Context, pipelineIDs []string, limit int) ([][]runtime.RunRecord, error)
	// Pause sets a pipeline's pause flag.
	Pause(ctx context.Context, pipelineID, by string) error
	// Resume clears it and reports whether it was set.
	Resume(ctx context.Context, pipelineID string) (bool, error)
	// Trigger asks for one run of the pipeline now.
	Trigger(ctx context.Context, pipelineID string) error
	// PollInterval is how soon replicas see a pause or a trigger.
	PollInterval() time.Duration
	// Close releases the connection.
	Close() error
}

// Opener connects to the fleet the environment describes, at redisURL
// instead of the environment's Redis when redisURL is not "" (the --redis
// flag). It returns an error wrapping ErrNotConfigured when nothing is
// configured.
type Opener func(ctx context.Context, redisURL string) (Backend, error)

// ErrNotConfigured is wrapped by an Opener's error when the environment
// names no fleet store (no AGORA_DISTRIBUTED_REDIS_URL).
var ErrNotConfigured = errors.New("fleet: no coordinator configured")

var (
	openerMu sync.Mutex
	opener   Opener
)

// RegisterBackend sets the Opener Run uses. Importing runtime/distributed
// registers the Redis one.
func RegisterBackend(open Opener) {
	openerMu.Lock()
	defer openerMu.Unlock()
	opener = open
}

func registeredOpener() Opener {
	openerMu.Lock()
	defer openerMu.Unlock()
	return opener
}
