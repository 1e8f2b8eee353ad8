// Package postgres is agora's PostgreSQL source and sink, on
// github.com/jackc/pgx/v5, and FencedTx for hand-written pipelines. It is a
// package of its own so that users of etl who need no PostgreSQL do not
// compile pgx; Register adds its components to a registry.
//
// Every write batch of the sink is one transaction: it locks the
// resource's row of agora_fencing with SELECT ... FOR UPDATE, refuses the
// batch with an error wrapping fencing.ErrStaleWriter when the run's
// fencing token is lower than the stored one, and otherwise stores the
// token, writes the rows and commits: a stale writer's batch never lands,
// in part or in full. Rows go in with COPY (insert) or one
// INSERT ... ON CONFLICT per batch (upsert); see BENCHMARKS.md for why.
package postgres
