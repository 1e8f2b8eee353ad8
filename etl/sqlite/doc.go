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
// slot another run completed is refused with fencing.ErrSlotDone, a slot
// older than the ledger keeps with fencing.ErrSlotForgotten, and the
// sink's Complete, which the pipeline calls when the run succeeds, marks
// the slot completed. A backfill run (fencing.BackfillOf) is the exception
// to the token rule: it is judged by its slot's ledger row alone, in every
// transaction, and stores no token, so it writes beside the scheduled runs
// without refusing them; it is refused with fencing.ErrSlotBusy when its
// slot's run may still be writing the slot. Mode "replace" writes the
// run's slot time to SinkConfig.SlotColumn and deletes the slot's earlier
// rows at the run's first write of the slot.
//
// Without columns, the sink writes each record's fields to the table's
// columns, read from the database (pragma_table_info, matched without regard to case) at the first write and
// again when a record has a field they lack and they are 5 s old. A
// record with a field that is not a column is rejected alone (SinkConfig.OnUnknownField "reject", the default) or
// written without it ("ignore"), its error wrapping etl.ErrUnknownField;
// the rest of the batch commits in the same
// fenced transaction. create_table never adds columns. See docs/etl.md.
package sqlite
