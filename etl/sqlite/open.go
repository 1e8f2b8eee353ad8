package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	sqlite "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// busyTimeoutMS is how long a statement waits for another connection's
// write lock before failing with SQLITE_BUSY: writers queue rather than
// fail.
const busyTimeoutMS = 30000

// Open opens the SQLite database file at path the way the sink and source
// use it: transactions begin with BEGIN IMMEDIATE (so a writer takes the
// write lock at once and never fails half-way on a lock upgrade), the
// journal is in WAL mode (readers do not block the writer), foreign keys
// are enforced, and a locked database is waited for up to 30 seconds.
// Use it for the *sql.DB given to FencedTx and NewSink.
func Open(path string) (*sql.DB, error) {
	if strings.TrimSpace(path) == "" {
		return nil, fmt.Errorf("sqlite: empty database path")
	}
	q := url.Values{}
	q.Set("_txlock", "immediate")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// shared holds the databases opened for registered components, one per
// path, kept for the life of the process: a config worker builds its
// components for every run, and reopening the file each time would throw
// away its connections and prepared state.
var shared struct {
	mu  sync.Mutex
	dbs map[string]*sql.DB
}

func openShared(path string) (*sql.DB, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if db := shared.dbs[path]; db != nil {
		return db, nil
	}
	db, err := Open(path)
	if err != nil {
		return nil, err
	}
	waitWAL(db, busyTimeoutMS*time.Millisecond)
	if shared.dbs == nil {
		shared.dbs = map[string]*sql.DB{}
	}
	shared.dbs[path] = db
	return db, nil
}

// waitWAL opens db's first connection, waiting up to d while it fails with
// SQLITE_BUSY. A connection sets journal_mode(WAL) when it opens, and on a
// file not yet in WAL mode (a new one) that needs the file to itself: a
// second process or handle opening it at that moment (two replicas, or
// parallel backfill slots, at their first write) fails at once with
// SQLITE_BUSY, which busy_timeout does not retry. Once one connection has
// switched the file, setting WAL again changes nothing. Other errors are
// left to the first statement, as before.
func waitWAL(db *sql.DB, d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		err := db.PingContext(ctx)
		cancel()
		if !isBusy(err) || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (extended codes too).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == 5
}
