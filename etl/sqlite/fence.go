package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/agora-etl/agora/etl/fencing"
)

// createFencing creates the fencing table when it is missing.
const createFencing = `CREATE TABLE IF NOT EXISTS ` + fencing.Table + ` (resource TEXT PRIMARY KEY, token INTEGER NOT NULL)`

// lockFencing writes the resource's row first thing, so the transaction
// holds SQLite's write lock from here to its commit even when it began
// DEFERRED, and returns the token stored before: a new row stores 0.
const lockFencing = `INSERT INTO ` + fencing.Table + ` (resource, token) VALUES (?1, 0)
ON CONFLICT (resource) DO UPDATE SET token = token RETURNING token`

const storeToken = `UPDATE ` + fencing.Table + ` SET token = ?2 WHERE resource = ?1`

// fence checks token against the one stored for resource inside tx and
// stores token when it is higher. It returns a *fencing.StaleWriterError
// when token is lower.
func fence(ctx context.Context, tx *sql.Tx, logger *slog.Logger, resource string, token int64) error {
	var stored int64
	if err := tx.QueryRowContext(ctx, lockFencing, resource).Scan(&stored); err != nil {
		return fmt.Errorf("sqlite: lock fencing row %q: %w", resource, err)
	}
	if err := fencing.Check(ctx, logger, resource, token, stored); err != nil {
		return err
	}
	if token > stored {
		if _, err := tx.ExecContext(ctx, storeToken, resource, token); err != nil {
			return fmt.Errorf("sqlite: store fencing token for %q: %w", resource, err)
		}
	}
	return nil
}

// FencedTx runs fn in a transaction of db under the fencing rule: before fn,
// it locks resource's row of agora_fencing (creating the table and the row
// when missing), and when token is lower than the stored token it rolls
// back without calling fn and returns an error wrapping
// fencing.ErrStaleWriter; otherwise it stores token, runs fn and commits.
// An error from fn rolls everything back, the stored token included.
//
// token is the run's lease.FencingToken; 0 (an unfenced lease) is refused
// with fencing.ErrUnfenced. Open db with Open so the transaction begins
// IMMEDIATE; with another *sql.DB the fencing statement still takes the
// write lock first, so the check holds either way.
func FencedTx(ctx context.Context, db *sql.DB, resource string, token int64, fn func(*sql.Tx) error) error {
	if token <= 0 {
		return fmt.Errorf("sqlite: resource %q: %w", resource, fencing.ErrUnfenced)
	}
	if err := ensureFencing(ctx, db); err != nil {
		return err
	}
	return inTx(ctx, db, func(tx *sql.Tx) error {
		if err := fence(ctx, tx, slog.Default(), resource, token); err != nil {
			return err
		}
		return fn(tx)
	})
}

// inTx runs fn in a transaction and commits it when fn returns nil.
func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	defer func() {
		if err != nil {
			if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
				err = errors.Join(err, fmt.Errorf("sqlite: rollback: %w", rbErr))
			}
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// fencingReady remembers the databases whose fencing table exists, so the
// check costs no extra statement per transaction.
var fencingReady sync.Map // *sql.DB → struct{}

func ensureFencing(ctx context.Context, db *sql.DB) error {
	if _, ok := fencingReady.Load(db); ok {
		return nil
	}
	if _, err := db.ExecContext(ctx, createFencing); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", fencing.Table, err)
	}
	fencingReady.Store(db, struct{}{})
	return nil
}
