// Package sqlrec holds what the PostgreSQL and SQLite components share:
// the sink's table settings and their checks, identifier quoting, the
// columns of a batch of records, the named query parameters of a source,
// and the fencing and slot ledger statements and rules (Fencer) both
// databases run inside their write transactions.
package sqlrec
