package sqlrec

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agora-etl/agora/etl/fencing"
)

// CreateLedger creates the slot ledger when it is missing; PostgreSQL and
// SQLite both take it as written.
const CreateLedger = `CREATE TABLE IF NOT EXISTS ` + fencing.Ledger + ` (resource text NOT NULL, slot bigint NOT NULL, token bigint NOT NULL, completed boolean NOT NULL DEFAULT false, PRIMARY KEY (resource, slot))`

// Tx is the part of a database transaction the fencing statements use;
// each database adapts its driver's transaction to it.
type Tx interface {
	// QueryRow runs q with args and scans its first row into dest; found is
	// false when q returned no row.
	QueryRow(ctx context.Context, q string, args []any, dest ...any) (found bool, err error)
	// Exec runs q with args.
	Exec(ctx context.Context, q string, args ...any) error
}

// Writer is a run writing to a fenced resource.
type Writer struct {
	// Resource is the fenced resource.
	Resource string
	// Token is the run's fencing token (> 0).
	Token int64
	// Slot is the run's slot when IsSlot (fencing.SlotOf).
	Slot   int64
	IsSlot bool
}

// Fencer holds one database's fencing and ledger statements.
type Fencer struct {
	db                                          string
	storeToken                                  string
	selectSlot, insertSlot, takeOver, completed string
	prune                                       string
}

// NewFencer returns the statements of the database named db ("postgres",
// "sqlite": it prefixes errors), whose n-th bind parameter is param(n).
func NewFencer(db string, param func(n int) string) *Fencer {
	p1, p2, p3 := param(1), param(2), param(3)
	where := ` WHERE resource = ` + p1 + ` AND slot = ` + p2
	return &Fencer{
		db:         db,
		storeToken: `UPDATE ` + fencing.Table + ` SET token = ` + p2 + ` WHERE resource = ` + p1,
		selectSlot: `SELECT token, CASE WHEN completed THEN 1 ELSE 0 END FROM ` + fencing.Ledger + where,
		insertSlot: `INSERT INTO ` + fencing.Ledger + ` (resource, slot, token, completed) VALUES (` + p1 + `, ` + p2 + `, ` + p3 + `, ` + param(4) + `)`,
		takeOver:   `UPDATE ` + fencing.Ledger + ` SET token = ` + p3 + `, completed = ` + param(4) + where,
		completed:  `UPDATE ` + fencing.Ledger + ` SET completed = TRUE` + where + ` AND token = ` + p3,
		// The SlotsKept newest slots stay; the subquery is NULL while there
		// are fewer, and nothing is deleted.
		prune: `DELETE FROM ` + fencing.Ledger + ` WHERE resource = ` + p1 + ` AND slot < (SELECT slot FROM ` + fencing.Ledger +
			` WHERE resource = ` + p1 + ` ORDER BY slot DESC LIMIT 1 OFFSET ` + p2 + `)`,
	}
}

// Fence applies the fencing rules to a write by w, inside the transaction
// tx that holds the lock on w.Resource's row of agora_fencing, whose token
// was stored:
//   - a token below stored is refused (*fencing.StaleWriterError);
//   - a token equal to stored is the run's next batch: its ledger row, if
//     it is a slot run, was written with its first batch, and no other run
//     can have changed it without storing a higher token;
//   - a higher token is the run's first write to the resource: a slot run
//     is checked against its ledger row (fencing.CheckSlot) and records
//     itself in it, then the token is stored.
func (f *Fencer) Fence(ctx context.Context, tx Tx, logger *slog.Logger, w Writer, stored int64) error {
	if err := fencing.Check(ctx, logger, w.Resource, w.Token, stored); err != nil {
		return err
	}
	if w.Token == stored {
		return nil
	}
	if w.IsSlot {
		if _, err := f.ledger(ctx, tx, logger, w, false); err != nil {
			return err
		}
	}
	if err := tx.Exec(ctx, f.storeToken, w.Resource, w.Token); err != nil {
		return fmt.Errorf("%s: store fencing token for %q: %w", f.db, w.Resource, err)
	}
	return nil
}

// Complete marks w's slot completed, inside the transaction tx that holds
// the lock on w.Resource's row of agora_fencing, whose token was stored.
// The run may have written nothing to the resource: its row is then
// inserted completed, or, when the slot's earlier run did not complete, the
// row is taken over completed and the token stored when higher, so that
// earlier run's next batch is refused. A slot completed by another run
// gets a *fencing.SlotDoneError, and a row taken over by a newer run a
// *fencing.StaleWriterError: this run did not complete the slot. A run
// that is not a slot run has nothing to mark.
func (f *Fencer) Complete(ctx context.Context, tx Tx, logger *slog.Logger, w Writer, stored int64) error {
	if !w.IsSlot {
		return nil
	}
	took, err := f.ledger(ctx, tx, logger, w, true)
	if err != nil || !took || w.Token <= stored {
		return err
	}
	if err := tx.Exec(ctx, f.storeToken, w.Resource, w.Token); err != nil {
		return fmt.Errorf("%s: store fencing token for %q: %w", f.db, w.Resource, err)
	}
	return nil
}

// ledger reads w's ledger row, applies fencing.CheckSlot and writes the
// row's new state, completed or not; tookOver reports a row taken over
// from an earlier run.
func (f *Fencer) ledger(ctx context.Context, tx Tx, logger *slog.Logger, w Writer, complete bool) (tookOver bool, err error) {
	var row fencing.SlotRow
	var done int64
	row.Found, err = tx.QueryRow(ctx, f.selectSlot, []any{w.Resource, w.Slot}, &row.Token, &done)
	if err != nil {
		return false, fmt.Errorf("%s: read slot ledger of %q: %w", f.db, w.Resource, err)
	}
	row.Completed = done != 0
	action, err := fencing.CheckSlot(ctx, logger, w.Resource, w.Slot, w.Token, row)
	if err != nil {
		return false, err
	}
	switch action {
	case fencing.SlotInsert:
		if err := tx.Exec(ctx, f.insertSlot, w.Resource, w.Slot, w.Token, complete); err != nil {
			return false, fmt.Errorf("%s: record slot %d of %q: %w", f.db, w.Slot, w.Resource, err)
		}
		if err := tx.Exec(ctx, f.prune, w.Resource, int64(fencing.SlotsKept-1)); err != nil {
			return false, fmt.Errorf("%s: prune slot ledger of %q: %w", f.db, w.Resource, err)
		}
	case fencing.SlotTakeOver:
		if err := tx.Exec(ctx, f.takeOver, w.Resource, w.Slot, w.Token, complete); err != nil {
			return false, fmt.Errorf("%s: take slot %d of %q over: %w", f.db, w.Slot, w.Resource, err)
		}
		return true, nil
	case fencing.SlotKeep:
		if complete && !row.Completed {
			if err := tx.Exec(ctx, f.completed, w.Resource, w.Slot, w.Token); err != nil {
				return false, fmt.Errorf("%s: complete slot %d of %q: %w", f.db, w.Slot, w.Resource, err)
			}
		}
	}
	return false, nil
}
