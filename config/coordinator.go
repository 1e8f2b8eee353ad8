package config

import (
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// coordinatorFromEnv returns the pool option that shares leases through
// Redis when AGORA_DISTRIBUTED_REDIS_URL is set, and nil otherwise: the
// same coordination, read from the same AGORA_DISTRIBUTED_* variables, as
// a generated worker.
// The file's run_history applies unless AGORA_DISTRIBUTED_RUN_HISTORY is
// set.
func (f *File) coordinatorFromEnv() (runtime.PoolOption, error) {
	return distributed.CoordinatorFromEnv(distributed.ModeAuto, func(c *distributed.Config) {
		if f.Worker.RunHistory != nil && !c.RunHistory.Set {
			c.RunHistory = distributed.RunHistorySetting{Policy: *f.Worker.RunHistory, Set: true}
		}
	})
}
