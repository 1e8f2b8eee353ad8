// Package kafka holds the "kafka" source and sink: a consumer group that
// commits offsets only after every sink and the dead-letter queue took a
// batch, and an idempotent producer. It is a package of its own so the
// Kafka client stays out of programs that do not name it; Register adds
// both to a registry (the agora command's registry has them).
package kafka
