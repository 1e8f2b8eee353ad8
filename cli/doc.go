// Package cli is the agora command: config-only workers, one-off runs,
// config checks and module workers, over the same runtime, coordinator and
// record model as generated workers. cmd/agora is a thin main over Main; a
// program that registers components of its own builds its own agora
// binary in a few lines:
//
//	func main() {
//		reg := cli.Builtins()
//		etl.RegisterSink(reg, "webhook", "POSTs each batch", newWebhook)
//		os.Exit(cli.Main(os.Args[1:], cli.WithRegistry(reg)))
//	}
//
// Usage:
//
//	agora worker --config FILE [worker flags]   run the pipelines of an agora/v1 file
//	agora worker --module PKG  [worker flags]   build and run an annotated Go package
//	agora run    --config FILE [--pipeline ID]… run every (or the named) pipeline once, now
//	agora check  --config FILE                  validate a file without running it
//	agora version                               print the version
//	agora help [COMMAND]                        print help
//
// The worker flags are those of every generated worker binary
// (worker.RunMain): -health-port, -log-format, -log-level. The
// AGORA_DISTRIBUTED_* variables wire the Redis lease coordinator exactly as
// in a generated worker.
//
// Exit codes: 0 success; 1 a failed run, an invalid config file or a
// worker that failed; 2 usage (an unknown command or flag); 130 a worker
// forced down by a second interrupt.
package cli
