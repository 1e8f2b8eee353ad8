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
// it returns a nil option, which runtime.NewWorkerPool ignores; in
// ModeRequired a missing URL is an error.
//
// It logs, through slog.Default, one line naming the coordinator mode. When
// AGORA_DISTRIBUTED_REDIS_URL is not set in ModeAuto, it returns instead a
// runtime.WithStartLog option that warns, through the pool's logger when
// the long-running pool starts, that this replica coordinates with no
// other, naming any variable that looks like a misspelt setting
// (AGORA_REDIS_URL, say): -help, the pipelines and run subcommands and
// `agora run` concern one process, so they do not warn.
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
		logMode(slog.Default(), Config{}, mode)
		return nil, nil
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
	logMode(slog.Default(), cfg, mode)
	coordinator, err := NewRedisWorkerCoordinator(cfg.Options())
	if err != nil {
		return nil, err
	}
	return runtime.WithCoordinator(coordinator), nil
}
