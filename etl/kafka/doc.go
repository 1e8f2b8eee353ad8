// Package kafka is agora's Kafka source and sink, on
// github.com/twmb/franz-go. It is a package of its own so that programs
// using etl without Kafka do not link franz-go; Register adds its
// components to a registry, and the agora command's registry
// (config.DefaultRegistry) does so.
//
// The source reads through a consumer group, at least once: offsets are
// committed only by Batch.Ack, which the pipeline calls after every sink
// and the dead-letter queue took the batch. Rebalances wait while a batch
// is in flight (franz-go's BlockRebalanceOnPoll), so a batch is never
// committed for partitions the group gave to another member meanwhile. A
// run whose batch was never acknowledged (a sink failed, the process was
// stopped or killed) leaves its offsets where they were, and the group
// reads those records again. A client whose every batch was acknowledged
// is kept, still in the group, for the next run of the same configuration
// (a continuous schedule starts one at once), so runs do not rejoin the
// group each time; one left idle for IdleClose is closed.
//
// The sink is an idempotent producer waiting for every in-sync replica
// (acks=all, franz-go's defaults): a retried produce request is not
// written twice. Write returns once the broker has every record of the
// batch, so a batch is durable before the source is acknowledged.
package kafka
