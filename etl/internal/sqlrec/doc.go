// Package sqlrec holds what the PostgreSQL and SQLite components share:
// the sink's table settings and their checks, identifier quoting, the
// columns of a batch of records, and the named query parameters of a
// source.
package sqlrec
