// Package etl is agora's record model: pipelines that move records from one
// Source to one or more Sinks in batches, with a dead-letter queue for
// records a sink rejects.
//
// The same pipelines serve both ways of running a worker. A config-only
// worker (`agora worker --config pipelines.toml`) builds them from agora/v1
// tables through a Registry, which maps each table's `type` to a component
// constructor and its configuration schema; a generated worker's factory can
// return one directly:
//
//	//agora:schedule id=orders every=15m
//	func BuildOrders(ctx context.Context) (runtime.Pipeline, error) {
//		src, err := etl.NewFileSource(etl.FileSourceConfig{Path: "in/*.jsonl"})
//		if err != nil {
//			return nil, err
//		}
//		return etl.New(src, []etl.Sink{etl.NewStdoutSink(os.Stdout)}), nil
//	}
//
// A run reads batches until the source is exhausted (a file, inline
// records) or has nothing new (a stream after its block timeout), or until a
// graceful shutdown is requested, and hands every batch to each sink in
// turn. Sinks get the run's context, so they can read the run's lease with
// runtime.LeaseFromContext and fence their writes with its token.
package etl
