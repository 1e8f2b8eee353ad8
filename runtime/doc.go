// Package runtime is what agora's generated worker code calls: schedules,
// scheduled pipelines, the worker pool with its health server and signal
// handling, and the Coordinator seam that decides which replica owns a run.
//
// A worker binary is normally produced by agoragen, whose generated
// GetWorker function registers every declared pipeline:
//
//	pool := runtime.NewWorkerPool(runtime.WithHealthPort(8080))
//	pool.Register(&runtime.ScheduledPipeline{
//		PipelineID: "orders-hourly",
//		Factory:    runtime.FactoryOf(BuildOrders),
//		Schedule:   runtime.MustCron("0 * * * *"),
//	})
//	err := pool.Run(ctx)
//
// Without a coordinator the pool uses an in-process one, so a single replica
// needs nothing else; with the Redis coordinator from runtime/distributed
// several replicas share the work and each scheduled run happens on exactly
// one of them.
//
// A worker binary explains and operates itself: Main serves /metrics (see
// WorkerPool.Gatherer) beside the probes, and runs subcommands named after
// its flags: "pipelines", "run ID...", "version", and those registered with
// RegisterCommand (package worker, the entry generated mains call,
// registers "fleet"; runtime imports neither it nor the fleet package). Coordinators that implement FleetController honour
// fleet-wide pauses and run-now triggers; CatchUpPolicy says what a cron
// pipeline does about missed slots.
package runtime
