package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/internal/sqlrec"
)

// createFencing creates the fencing table when it is missing.
const createFencing = `CREATE TABLE IF NOT EXISTS ` + fencing.Table + ` (resource TEXT PRIMARY KEY, token INTEGER NOT NULL)`

// lockFencing writes the resource's row first thing, so the transaction
// holds SQLite's write lock from here to its commit even when it began
// DEFERRED, and returns the token stored before: a new row stores 0.
const lockFencing = `INSERT INTO ` + fencing.Table + ` (resource, token) VALUES (?1, 0)
ON CONFLICT (resource) DO UPDATE SET token = token RETURNING token`

// fencer holds the shared fencing and slot ledger statements, in SQLite's
// parameter style.
var fencer = sqlrec.NewFencer("sqlite", func(n int) string { return "?" + strconv.Itoa(n) })

// liteTx adapts a *sql.Tx to sqlrec.Tx.
type liteTx struct{ tx *sql.Tx }

func (t liteTx) QueryRow(ctx context.Context, q string, args []any, dest ...any) (bool, error) {
	err := t.tx.QueryRowContext(ctx, q, args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (t liteTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return err
}

// lockResource writes resource's fencing row, creating it when missing, so
// tx holds the write lock, and returns its stored token.
func lockResource(ctx context.Context, tx *sql.Tx, resource string) (int64, error) {
	var stored int64
	if err := tx.QueryRowContext(ctx, lockFencing, resource).Scan(&stored); err != nil {
		return 0, fmt.Errorf("sqlite: lock fencing row %q: %w", resource, err)
	}
	return stored, nil
}

// fence locks w's resource row in tx and applies the fencing rules and,
// for a slot run, the slot ledger's (sqlrec.Fencer.Fence). Once it returns
// nil, stored is the resource's stored token: w.Token, unless w is a
// backfill run, which stores none; claimed reports the slot run's first
// write of its slot (its ledger row inserted or taken over).
func fence(ctx context.Context, tx *sql.Tx, logger *slog.Logger, w sqlrec.Writer) (stored int64, claimed bool, err error) {
	stored, err = lockResource(ctx, tx, w.Resource)
	if err != nil {
		return 0, false, err
	}
	claimed, err = fencer.Fence(ctx, liteTx{tx}, logger, w, stored)
	if err != nil {
		return 0, false, err
	}
	if !w.IsSlot || !w.Backfill {
		stored = w.Token
	}
	return stored, claimed, nil
}

// writer describes the run ctx belongs to, writing to resource with token.
func writer(ctx context.Context, resource string, token int64) sqlrec.Writer {
	slot, ok := fencing.SlotOf(ctx, token)
	return sqlrec.Writer{Resource: resource, Token: token, Slot: slot, IsSlot: ok,
		Backfill: fencing.BackfillOf(ctx, token), Reprocess: fencing.ReprocessOf(ctx, token)}
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
//
// When ctx is the context of a slot run (a cron or Every run: see
// fencing.SlotOf) holding token, the transaction also applies the slot
// ledger's rules (the fencing package doc): a slot another run completed is
// refused with an error wrapping fencing.ErrSlotDone before fn is called,
// and the run's first transaction records it as the slot's writer. With
// fencing.CompletesSlot() among opts the slot is marked completed in the
// same transaction, after fn; without it, call CompleteSlot when the run is
// done. Continuous, Once and triggered runs keep the token rule alone. A
// backfill run (fencing.BackfillOf) is the exception to the token rule: it
// is judged by its slot's ledger row alone, in every transaction, and
// stores no token, so it writes beside the scheduled runs without refusing
// them (fencing.CheckSlotBackfill; fencing.ErrSlotBusy when the slot's own
// scheduled run may still be writing it).
func FencedTx(ctx context.Context, db *sql.DB, resource string, token int64, fn func(*sql.Tx) error, opts ...fencing.TxOption) error {
	if token <= 0 {
		return fmt.Errorf("sqlite: resource %q: %w", resource, fencing.ErrUnfenced)
	}
	if err := ensureFencing(ctx, db); err != nil {
		return err
	}
	o := fencing.ApplyTxOptions(opts)
	w := writer(ctx, resource, token)
	return inTx(ctx, db, func(tx *sql.Tx) error {
		stored, _, err := fence(ctx, tx, slog.Default(), w)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		if o.Complete {
			_, err := fencer.Complete(ctx, liteTx{tx}, slog.Default(), w, stored)
			return err
		}
		return nil
	})
}

// CompleteSlot marks the slot of the run ctx belongs to completed on
// resource, in a transaction of its own, for a hand-written pipeline that
// learns only after its last FencedTx that the run is done (otherwise pass
// fencing.CompletesSlot() to the last FencedTx, which marks it in the same
// transaction as the rows). Call it once the run's writes are all
// committed, before the run returns nil. token is the run's
// lease.FencingToken. From then on a run of the same slot with another
// token is refused with fencing.ErrSlotDone. It returns that error itself
// when another run completed the slot first, and fencing.ErrStaleWriter
// when a newer run took the slot over. A run that is not a slot run
// (Continuous, Once, a triggered run; see fencing.SlotOf) has nothing to
// mark: CompleteSlot returns nil without a statement.
func CompleteSlot(ctx context.Context, db *sql.DB, resource string, token int64) error {
	if token <= 0 {
		return fmt.Errorf("sqlite: resource %q: %w", resource, fencing.ErrUnfenced)
	}
	return completeSlot(ctx, db, slog.Default(), writer(ctx, resource, token), nil)
}

// completeSlot marks w's slot completed in a transaction of its own;
// onClaim, when set, runs in that transaction when it inserts or takes
// over the slot's ledger row.
func completeSlot(ctx context.Context, db *sql.DB, logger *slog.Logger, w sqlrec.Writer, onClaim func(*sql.Tx) error) error {
	if !w.IsSlot {
		return nil
	}
	if err := ensureFencing(ctx, db); err != nil {
		return err
	}
	return inTx(ctx, db, func(tx *sql.Tx) error {
		stored, err := lockResource(ctx, tx, w.Resource)
		if err != nil {
			return err
		}
		claimed, err := fencer.Complete(ctx, liteTx{tx}, logger, w, stored)
		if err != nil || !claimed || onClaim == nil {
			return err
		}
		return onClaim(tx)
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
	if err := ctx.Err(); err != nil {
		// The run ended (its timeout) while the rows were written: they
		// are not committed.
		return fmt.Errorf("sqlite: not committing: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// fencingReady remembers the databases whose fencing table exists, so the
// check costs no extra statement per transaction.
var fencingReady sync.Map // *sql.DB → struct{}

// ensureFencing creates agora_fencing and the slot ledger agora_slots when
// missing, once per database handle: a database made before the ledger
// existed gains it at its first write.
func ensureFencing(ctx context.Context, db *sql.DB) error {
	if _, ok := fencingReady.Load(db); ok {
		return nil
	}
	if _, err := db.ExecContext(ctx, createFencing); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", fencing.Table, err)
	}
	if _, err := db.ExecContext(ctx, sqlrec.CreateLedger); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", fencing.Ledger, err)
	}
	fencingReady.Store(db, struct{}{})
	return nil
}
