package postgres

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/etl/fencing"
)

func TestFencedTx(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE w (v int)")
	ctx := context.Background()
	insert := func(v int) func(pgx.Tx) error {
		return func(tx pgx.Tx) error { _, err := tx.Exec(ctx, "INSERT INTO w VALUES ($1)", v); return err }
	}
	if err := FencedTx(ctx, pool, "w", 5, insert(1)); err != nil {
		t.Fatal(err)
	}
	called := false
	err := FencedTx(ctx, pool, "w", 4, func(pgx.Tx) error { called = true; return nil })
	if !errors.Is(err, fencing.ErrStaleWriter) || called {
		t.Fatalf("stale token: err = %v, fn called %v", err, called)
	}
	boom := errors.New("boom")
	if err := FencedTx(ctx, pool, "w", 9, func(tx pgx.Tx) error { insert(2)(tx); return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn error: %v", err)
	}
	// fn's failure rolled the token back too: 6 still writes.
	if err := FencedTx(ctx, pool, "w", 6, insert(3)); err != nil {
		t.Fatal(err)
	}
	if err := FencedTx(ctx, pool, "w", 0, insert(4)); !errors.Is(err, fencing.ErrUnfenced) {
		t.Fatalf("token 0: %v", err)
	}
	if got := db.Ints(t, "SELECT v FROM w ORDER BY v"); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("rows %v, want [1 3]", got)
	}
}

// A newer writer that arrives while an older one is between its check and
// its commit waits for the commit; the older one cannot write after it.
func TestFencedTxHoldsTheLockToCommit(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE w (v int)")
	ctx := context.Background()
	inside, release := make(chan struct{}), make(chan struct{})
	oldDone := make(chan error, 1)
	go func() {
		oldDone <- FencedTx(ctx, pool, "w", 10, func(tx pgx.Tx) error {
			close(inside)
			<-release
			_, err := tx.Exec(ctx, "INSERT INTO w VALUES (10)")
			return err
		})
	}()
	<-inside
	newDone := make(chan error, 1)
	go func() {
		newDone <- FencedTx(ctx, pool, "w", 11, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO w VALUES (11)")
			return err
		})
	}()
	select {
	case err := <-newDone:
		t.Fatalf("the newer writer did not wait for the older one's commit: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-oldDone; err != nil {
		t.Fatal(err)
	}
	if err := <-newDone; err != nil {
		t.Fatal(err)
	}
	if err := FencedTx(ctx, pool, "w", 10, func(pgx.Tx) error { return nil }); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("older token after the newer committed: %v", err)
	}
	if got := db.Ints(t, "SELECT v FROM w ORDER BY v"); !slices.Equal(got, []int64{10, 11}) {
		t.Fatalf("rows %v", got)
	}
}
