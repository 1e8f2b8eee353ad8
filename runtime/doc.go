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
// A pool serves the probes and /status; /metrics only when it is given
// metrics (WithMetrics: package runtime/metrics, which every worker binary
// has), so runtime links no metrics library. The entry of a worker binary
// (flags, subcommands, logging, metrics, the exporter) is package worker,
// which a generated or hand-written main calls; runtime holds no registry a
// package adds to on import. Coordinators that implement FleetController honour
// fleet-wide pauses and run-now triggers; CatchUpPolicy says what a cron
// pipeline does about missed slots.
//
// The scheduling engine behind WorkerPool (the dispatcher, the runners and
// the plans they carry out) lives in runtime/internal/engine; runtime's
// types are its public face.
package runtime
