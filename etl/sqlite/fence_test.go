package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl/fencing"
)

func TestFencedTx(t *testing.T) {
	db, _ := testDB(t)
	sdb := suiteDB(t, db)
	sdb.Exec(t, "CREATE TABLE w (v INTEGER)")
	ctx := context.Background()
	insert := func(v int) func(*sql.Tx) error {
		return func(tx *sql.Tx) error { _, err := tx.Exec("INSERT INTO w VALUES (?)", v); return err }
	}
	if err := FencedTx(ctx, db, "w", 5, insert(1)); err != nil {
		t.Fatal(err)
	}
	called := false
	if err := FencedTx(ctx, db, "w", 4, func(*sql.Tx) error { called = true; return nil }); !errors.Is(err, fencing.ErrStaleWriter) || called {
		t.Fatalf("stale token: err = %v, fn called %v", err, called)
	}
	boom := errors.New("boom")
	if err := FencedTx(ctx, db, "w", 9, func(tx *sql.Tx) error { insert(2)(tx); return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn error: %v", err)
	}
	if err := FencedTx(ctx, db, "w", 6, insert(3)); err != nil {
		t.Fatal(err)
	}
	if err := FencedTx(ctx, db, "w", 0, insert(4)); !errors.Is(err, fencing.ErrUnfenced) {
		t.Fatalf("token 0: %v", err)
	}
	if got := sdb.Ints(t, "SELECT v FROM w ORDER BY v"); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("rows %v, want [1 3]", got)
	}
}

// Even on a database opened without BEGIN IMMEDIATE, the fencing
// statement takes the write lock first: a newer writer waits for the
// older one's commit, and the older one cannot write after it.
func TestFencedTxHoldsTheLockOnAPlainDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Exec("CREATE TABLE w (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	oldDone := make(chan error, 1)
	go func() {
		oldDone <- FencedTx(ctx, db, "w", 10, func(tx *sql.Tx) error {
			close(inside)
			<-release
			_, err := tx.Exec("INSERT INTO w VALUES (10)")
			return err
		})
	}()
	<-inside
	newDone := make(chan error, 1)
	go func() {
		newDone <- FencedTx(ctx, db, "w", 11, func(tx *sql.Tx) error { _, err := tx.Exec("INSERT INTO w VALUES (11)"); return err })
	}()
	select {
	case err := <-newDone:
		t.Fatalf("the newer writer did not wait: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-oldDone; err != nil {
		t.Fatal(err)
	}
	if err := <-newDone; err != nil {
		t.Fatal(err)
	}
	if err := FencedTx(ctx, db, "w", 10, func(*sql.Tx) error { return nil }); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("older token after the newer committed: %v", err)
	}
}
