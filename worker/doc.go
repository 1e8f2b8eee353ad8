// Package worker is the entry point of agora worker binaries. A generated
// main (//agora:worker main, or agoragen -main) and a hand-written one are
// the same line:
//
//	func main() { worker.Main(orders.GetWorker) }
//
// Main parses the worker flags (-health-port, -health-addr, -log-format,
// -log-level), builds the pool with the given function and runs it until
// SIGINT, SIGTERM or SIGHUP (a second signal stops at once); a first argument
// selects a subcommand instead: pipelines, run ID..., version, fleet, help.
// Exit statuses: 0 clean shutdown, 1 failure or bad configuration, 2 usage,
// 130 forced by a second interrupt (ExitOK ... ExitInterrupted). RunMain
// documents each flag and command.
//
// What a binary links is visible here and in its main, not added by
// packages as they are imported: the entry serves the fleet subcommand
// (package fleet) and the AGORA_DISTRIBUTED_* help (runtime/distributed)
// itself, gives the pool the Prometheus metrics of runtime/metrics (served
// at /metrics) unless the pool's code gave it metrics, links the OTLP
// trace exporter, used when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set
// (the other OTEL_* variables configure it), and takes the rest as
// options:
//
//	func main() {
//		worker.Main(orders.GetWorker,
//			worker.WithCommand(worker.Command{Name: "migrate", Summary: "apply the schema", Run: migrate}),
//			worker.WithCollectors(etl.SinkCollector(), fencing.RefusalCollector()))
//	}
//
// runtime imports none of these, so what generated worker.go files import
// pulls in no gRPC and no exporter.
//
// Building with -tags agora_nootlp leaves the OTLP exporter out (about 140
// packages of gRPC and protobuf, 5 MB of a 36 MB worker): such a worker logs
// a warning instead of tracing when an OTLP endpoint is set. Tracer
// providers given in code (runtime.WithTracerProvider) work either way.
package worker
