package distributed

import (
	"fmt"
	"log/slog"

	"github.com/agora-etl/agora/runtime"
)

// Mode says whether a worker shares leases through Redis: the
// distributed=auto|required|off setting of a worker.
type Mode int

// The modes of CoordinatorFromEnv.
const (
	// ModeAuto wires the Redis coordinator when AGORA_DISTRIBUTED_REDIS_URL
	// is set and runs with in-process leases otherwise.
	ModeAuto Mode = iota
	// ModeRequired fails when AGORA_DISTRIBUTED_REDIS_URL is not set, so a
	// replica never runs unshared by mistake.
	ModeRequired
	// ModeOff never uses Redis and reads no AGORA_DISTRIBUTED_* variable.
	ModeOff
)

// String returns the mode as a worker setting spells it.
func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeRequired:
		return "required"
	case ModeOff:
		return "off"
	default:
		return fmt.Sprintf("Mode(%d)", int(m))
	}
}

// CoordinatorFromEnv reads the AGORA_DISTRIBUTED_* environment (LoadConfig)
// and returns the pool option that wires a RedisWorkerCoordinator built from
// it. In ModeAuto without AGORA_DISTRIBUTED_REDIS_URL, and always in ModeOff,
// the option wires no coordinator (the pool keeps its in-process one); in
// ModeRequired a missing URL is an error.
//
// The option logs one line naming the coordinator mode, through the pool's
// logger when the long-running pool starts (runtime.WithStartLog): -help,
// the pipelines and run subcommands and `agora run` concern one process, so
// they print nothing about it. When AGORA_DISTRIBUTED_REDIS_URL is not set
// in ModeAuto, the line is a warning that this replica coordinates with no
// other, naming any variable that looks like a misspelt setting
// (AGORA_REDIS_URL, say).
//
// Every error wraps ErrInvalidConfig and carries only its prefix
// ("distributed: invalid configuration: ..."), one line per problem, so a
// caller can log it as is.
//
// Each adjust function, when given, changes the settings read before the
// coordinator is built: the agora command uses one to apply the [worker]
// settings of a config file that the environment leaves unset.
func CoordinatorFromEnv(mode Mode, adjust ...func(*Config)) (runtime.PoolOption, error) {
	switch mode {
	case ModeOff:
		return runtime.WithStartLog(func(l *slog.Logger) { logMode(l, Config{}, mode) }), nil
	case ModeAuto, ModeRequired:
	default:
		return nil, fmt.Errorf("%w: unknown distributed mode %d; use ModeAuto, ModeRequired or ModeOff", ErrInvalidConfig, int(mode))
	}
	cfg, err := LoadConfig()
	if err != nil {
		return nil, err
	}
	for _, f := range adjust {
		f(&cfg)
	}
	if cfg.RedisURL == "" {
		if mode == ModeRequired {
			return nil, fmt.Errorf("%w: %s is not set; this worker requires a Redis coordinator (distributed=required)", ErrInvalidConfig, envNames.RedisURL)
		}
		return runtime.WithStartLog(func(l *slog.Logger) { logMode(l, cfg, mode) }), nil
	}
	coordinator, err := NewRedisWorkerCoordinator(cfg.Options())
	if err != nil {
		return nil, err
	}
	return both(runtime.WithCoordinator(coordinator), runtime.WithStartLog(func(l *slog.Logger) { logMode(l, cfg, mode) })), nil
}

// both applies a, then b: two pool options as one (the option type's
// argument is the runtime's own).
func both[T any](a, b func(T)) func(T) { return func(c T) { a(c); b(c) } }
