package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/internal/sqlrec"
)

const createFencing = `CREATE TABLE IF NOT EXISTS ` + fencing.Table + ` (resource text PRIMARY KEY, token bigint NOT NULL)`

const (
	selectToken = `SELECT token FROM ` + fencing.Table + ` WHERE resource = $1 FOR UPDATE`
	insertToken = `INSERT INTO ` + fencing.Table + ` (resource, token) VALUES ($1, 0) ON CONFLICT (resource) DO NOTHING`
)

// fencer holds the shared fencing and slot ledger statements, in
// PostgreSQL's parameter style.
var fencer = sqlrec.NewFencer("postgres", func(n int) string { return "$" + strconv.Itoa(n) })

// pgTx adapts a pgx.Tx to sqlrec.Tx.
type pgTx struct{ tx pgx.Tx }

func (t pgTx) QueryRow(ctx context.Context, q string, args []any, dest ...any) (bool, error) {
	err := t.tx.QueryRow(ctx, q, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (t pgTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.Exec(ctx, q, args...)
	return err
}

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

// ensureFencing creates agora_fencing and the slot ledger agora_slots when
// missing, once per database handle: a database made before the ledger
// existed gains it at its first write. Two processes creating it at once
// collide on the catalog; the loser runs the statement again
// (createIfMissing) and finds the table there.
func ensureFencing(ctx context.Context, db Beginner) error {
	if _, ok := fencingReady.Load(db); ok {
		return nil
	}
	for _, c := range []struct{ table, ddl string }{{fencing.Table, createFencing}, {fencing.Ledger, sqlrec.CreateLedger}} {
		err := createIfMissing(func() error {
			if ex, ok := db.(execer); ok {
				_, err := ex.Exec(ctx, c.ddl)
				return err
			}
			return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, c.ddl); return err })
		})
		if err != nil {
			return fmt.Errorf("postgres: create %s: %w", c.table, err)
		}
	}
	fencingReady.Store(db, struct{}{})
	return nil
}

// lockResource locks resource's fencing row in tx, creating it when
// missing, and returns its stored token.
func lockResource(ctx context.Context, tx pgx.Tx, resource string) (int64, error) {
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
		return 0, fmt.Errorf("postgres: lock fencing row %q: %w", resource, err)
	}
	return stored, nil
}

// fence locks w's resource row in tx and applies the fencing rules and,
// for a slot run, the slot ledger's (sqlrec.Fencer.Fence). Once it returns
// nil, stored is the resource's stored token: w.Token, unless w is a
// backfill run, which stores none; claimed reports the slot run's first
// write of its slot (its ledger row inserted or taken over).
func fence(ctx context.Context, tx pgx.Tx, logger *slog.Logger, w sqlrec.Writer) (stored int64, claimed bool, err error) {
	stored, err = lockResource(ctx, tx, w.Resource)
	if err != nil {
		return 0, false, err
	}
	claimed, err = fencer.Fence(ctx, pgTx{tx}, logger, w, stored)
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
func FencedTx(ctx context.Context, db Beginner, resource string, token int64, fn func(pgx.Tx) error, opts ...fencing.TxOption) error {
	if token <= 0 {
		return fmt.Errorf("postgres: resource %q: %w", resource, fencing.ErrUnfenced)
	}
	if err := ensureFencing(ctx, db); err != nil {
		return err
	}
	o := fencing.ApplyTxOptions(opts)
	w := writer(ctx, resource, token)
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		stored, _, err := fence(ctx, tx, slog.Default(), w)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		if o.Complete {
			_, err := fencer.Complete(ctx, pgTx{tx}, slog.Default(), w, stored)
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
func CompleteSlot(ctx context.Context, db Beginner, resource string, token int64) error {
	if token <= 0 {
		return fmt.Errorf("postgres: resource %q: %w", resource, fencing.ErrUnfenced)
	}
	return completeSlot(ctx, db, slog.Default(), writer(ctx, resource, token), nil)
}

// completeSlot marks w's slot completed in a transaction of its own;
// onClaim, when set, runs in that transaction when it inserts or takes
// over the slot's ledger row.
func completeSlot(ctx context.Context, db Beginner, logger *slog.Logger, w sqlrec.Writer, onClaim func(pgx.Tx) error) error {
	if !w.IsSlot {
		return nil
	}
	if err := ensureFencing(ctx, db); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		stored, err := lockResource(ctx, tx, w.Resource)
		if err != nil {
			return err
		}
		claimed, err := fencer.Complete(ctx, pgTx{tx}, logger, w, stored)
		if err != nil || !claimed || onClaim == nil {
			return err
		}
		return onClaim(tx)
	})
}
