// Package sqlite is agora's SQLite source and sink, on the pure-Go driver
// modernc.org/sqlite (no cgo), and FencedTx for hand-written pipelines.
// It is a package of its own so that users of etl who need no SQLite do
// not compile it; Register adds its components to a registry.
//
// Every write batch of the sink is one transaction that takes SQLite's
// write lock at its first statement, locks the resource's row of
// agora_fencing, refuses the batch with an error wrapping
// fencing.ErrStaleWriter when the run's fencing token is lower than the
// stored one, and otherwise stores the token, writes the rows and commits:
// a stale writer's batch never lands, in part or in full.
//
// For a slot run (cron, Every) the same transaction applies the slot
// ledger, agora_slots (see the fencing package doc and docs/fencing.md): a
// slot another run completed is refused with fencing.ErrSlotDone, and the
// sink's Complete, which the pipeline calls when the run succeeds, marks
// the slot completed.
package sqlite
