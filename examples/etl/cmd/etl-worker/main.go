// Command etl-worker runs the example's pipelines. Start several replicas
// with the same AGORA_DISTRIBUTED_REDIS_URL and each scheduled run happens on
// exactly one of them:
//
//	AGORA_DISTRIBUTED_REDIS_URL=redis://127.0.0.1:6379/0 etl-worker -health-port 8081
package main

import (
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/examples/etl"
	"github.com/agora-etl/agora/worker"
)

func main() {
	// The warehouse writes through fenced SQLite: /metrics counts the
	// writes it refused (agora_fencing_refusals_total).
	worker.Main(etl.GetWorker, worker.WithCollectors(fencing.RefusalCollector()))
}
