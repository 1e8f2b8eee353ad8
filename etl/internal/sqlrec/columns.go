package sqlrec

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/agora-etl/agora/etl"
)

// ColumnsMaxAge is how old a sink's kept table columns may be before a
// record with a field they lack makes the sink read them again.
const ColumnsMaxAge = 5 * time.Second

// ColumnCache keeps a table's columns for a sink: read at the first write,
// kept, and read again when a record has a field they lack and they were
// read ColumnsMaxAge ago or more (so a column added to the table since,
// ALTER TABLE ... ADD COLUMN, is written without a restart, while a stream
// whose records keep carrying an ignored field costs one catalog query per
// ColumnsMaxAge at most, not one per batch), or after Forget. It is safe for concurrent use.
type ColumnCache struct {
	// Read reads the table's columns, each mapped to a flag the sink
	// keeps with it (PostgreSQL: an integer column). An error or no
	// columns (the table does not exist yet) leaves the kept ones.
	Read func(ctx context.Context) (map[string]bool, error)
	// Fold matches fields to columns case-insensitively (SQLite); Read
	// then returns lower-case names.
	Fold bool
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu   sync.Mutex
	cols map[string]bool
	at   time.Time
	read bool
}

func (c *ColumnCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Forget makes the next write read the columns again.
func (c *ColumnCache) Forget() {
	c.mu.Lock()
	c.read = false
	c.mu.Unlock()
}

// columns returns the kept columns, reading them first when not read yet
// or when refresh and they are ColumnsMaxAge old.
func (c *ColumnCache) columns(ctx context.Context, refresh bool) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read && c.cols != nil && (!refresh || c.now().Sub(c.at) < ColumnsMaxAge) {
		return c.cols
	}
	got, err := c.Read(ctx)
	if err != nil || len(got) == 0 {
		return c.cols
	}
	c.cols, c.at, c.read = got, c.now(), true
	return c.cols
}

// Fit sorts records against the table's columns (FitColumns) and returns
// the columns too (nil while the table cannot be read).
func (c *ColumnCache) Fit(ctx context.Context, table string, configured []string, records []etl.Record, onUnknown string) (Fit, map[string]bool) {
	cols := c.columns(ctx, false)
	f := FitColumns(table, configured, records, c.known(cols), onUnknown)
	if f.Unknown > 0 {
		if fresh := c.columns(ctx, true); !sameKeys(fresh, cols) {
			cols = fresh
			f = FitColumns(table, configured, records, c.known(cols), onUnknown)
		}
	}
	return f, cols
}

func (c *ColumnCache) known(cols map[string]bool) func(string) bool {
	if cols == nil {
		return nil
	}
	if c.Fold {
		return func(f string) bool {
			if _, ok := cols[f]; ok {
				return true // most fields are lower-case already
			}
			_, ok := cols[strings.ToLower(f)]
			return ok
		}
	}
	return func(f string) bool { _, ok := cols[f]; return ok }
}

func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
