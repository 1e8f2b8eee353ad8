package config

import (
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// coordinatorFromEnv returns the pool option that shares leases through
// Redis when AGORA_DISTRIBUTED_REDIS_URL is set, and nil otherwise: the
// same coordination, read from the same AGORA_DISTRIBUTED_* variables, as
// a generated worker.
func coordinatorFromEnv() (runtime.PoolOption, error) {
	return distributed.CoordinatorFromEnv(distributed.ModeAuto)
}
