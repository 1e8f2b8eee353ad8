package config

import (
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// coordinatorFromEnv returns the pool option that shares leases through
// Redis when AGORA_DISTRIBUTED_REDIS_URL is set, and nil otherwise: the
// same coordination as a generated worker.
//
// INTEGRATION: replace the body with
// distributed.CoordinatorFromEnv(distributed.ModeAuto) once it is on main.
func coordinatorFromEnv() (runtime.PoolOption, error) {
	cfg, err := distributed.LoadConfig()
	if err != nil {
		return nil, err
	}
	if cfg.RedisURL == "" {
		return nil, nil
	}
	c, err := distributed.NewRedisWorkerCoordinator(cfg.Options())
	if err != nil {
		return nil, err
	}
	return runtime.WithCoordinator(c), nil
}
