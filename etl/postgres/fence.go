package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agora-etl/agora/etl/fencing"
)

const createFencing = `CREATE TABLE IF NOT EXISTS ` + fencing.Table + ` (resource text PRIMARY KEY, token bigint NOT NULL)`

const (
	selectToken = `SELECT token FROM ` + fencing.Table + ` WHERE resource = $1 FOR UPDATE`
	insertToken = `INSERT INTO ` + fencing.Table + ` (resource, token) VALUES ($1, 0) ON CONFLICT (resource) DO NOTHING`
	storeToken  = `UPDATE ` + fencing.Table + ` SET token = $2 WHERE resource = $1`
)

// Beginner starts transactions: a *pgxpool.Pool, a *pgx.Conn, or a pgx.Tx
// (for a savepoint inside the caller's transaction).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// execer runs a statement outside a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// fencingReady remembers the databases whose fencing table exists.
var fencingReady sync.Map // Beginner → struct{}

// ensureFencing creates agora_fencing when missing, once per database
// handle. Two processes creating it at once collide on the catalog; the
// loser finds it there.
func ensureFencing(ctx context.Context, db Beginner) error {
	if _, ok := fencingReady.Load(db); ok {
		return nil
	}
	var err error
	if ex, ok := db.(execer); ok {
		_, err = ex.Exec(ctx, createFencing)
	} else {
		err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, createFencing); return err })
	}
	if err != nil && !alreadyExists(err) {
		return fmt.Errorf("postgres: create %s: %w", fencing.Table, err)
	}
	fencingReady.Store(db, struct{}{})
	return nil
}

// fence locks resource's fencing row in tx, creating it when missing, and
// compares token with the stored one: a lower token gets a
// *fencing.StaleWriterError; a higher one is stored.
func fence(ctx context.Context, tx pgx.Tx, logger *slog.Logger, resource string, token int64) error {
	var stored int64
	err := tx.QueryRow(ctx, selectToken, resource).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		// First write to the resource: make its row, then lock it. A
		// concurrent first writer may make it first; both then lock the
		// same row.
		if _, err = tx.Exec(ctx, insertToken, resource); err == nil {
			err = tx.QueryRow(ctx, selectToken, resource).Scan(&stored)
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: lock fencing row %q: %w", resource, err)
	}
	if err := fencing.Check(ctx, logger, resource, token, stored); err != nil {
		return err
	}
	if token > stored {
		if _, err := tx.Exec(ctx, storeToken, resource, token); err != nil {
			return fmt.Errorf("postgres: store fencing token for %q: %w", resource, err)
		}
	}
	return nil
}

// FencedTx runs fn in a transaction of db under the fencing rule: before
// fn, it locks resource's row of agora_fencing with SELECT ... FOR UPDATE
// (creating the table and the row when missing); when token is lower than
// the stored token it rolls back without calling fn and returns an error
// wrapping fencing.ErrStaleWriter; otherwise it stores token, runs fn and
// commits. An error from fn rolls everything back, the stored token
// included. The row lock is held to the commit, so a newer writer waits
// for this transaction and a stale one cannot slip in between check and
// commit.
//
// token is the run's lease.FencingToken; 0 (an unfenced lease) is refused
// with fencing.ErrUnfenced.
func FencedTx(ctx context.Context, db Beginner, resource string, token int64, fn func(pgx.Tx) error) error {
	if token <= 0 {
		return fmt.Errorf("postgres: resource %q: %w", resource, fencing.ErrUnfenced)
	}
	if err := ensureFencing(ctx, db); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if err := fence(ctx, tx, slog.Default(), resource, token); err != nil {
			return err
		}
		return fn(tx)
	})
}

// alreadyExists reports whether a CREATE ... IF NOT EXISTS lost a race with
// another session creating the same object (a unique violation in the
// catalog, or duplicate_table).
func alreadyExists(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42P07")
}
