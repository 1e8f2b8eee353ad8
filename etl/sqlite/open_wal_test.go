package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Handles of their own (as two replicas' processes have) open a new
// database file at once and create the fencing tables, as parallel
// backfill slots do at their first write: none fails with SQLITE_BUSY
// from switching the new file to WAL.
func TestNewFileOpenedByHandlesAtOnce(t *testing.T) {
	for i := range 100 {
		path := filepath.Join(t.TempDir(), "out.db")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for j := range errs {
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				waitWAL(db, 5*time.Second)
				errs[j] = ensureFencing(context.Background(), db)
			}()
		}
		wg.Wait()
		for j, err := range errs {
			if err != nil {
				t.Fatalf("round %d, handle %d: %v", i, j, err)
			}
		}
	}
}
