package worker

import (
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// keepRunHistory gives a pool without a run history one in memory (the
// last 100 runs per pipeline, for 7 days), where the coordinator the pool
// makes when it has no other keeps its runs: the runtime keeps none
// unless given a store, and a worker binary keeps what it always kept.
func keepRunHistory(pool *runtime.WorkerPool) error {
	if pool.RunHistory() != nil {
		return nil
	}
	return pool.Configure(runtime.WithRunHistory(history.New(history.Policy{})))
}
