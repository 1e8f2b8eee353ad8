package etl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/agora-etl/agora/runtime"
)

// ErrStaleWriter is returned by Warehouse.Load for a write fenced with a
// token older than one the table has already accepted.
var ErrStaleWriter = errors.New("etl: stale writer: fencing token older than the table's")

// Warehouse is the destination of every pipeline. This example keeps it in
// memory; a real one is a database whose writes carry the fencing token, for
// instance in a conditional UPDATE ... WHERE token <= $1.
type Warehouse struct {
	mu     sync.Mutex
	tables map[string]*table
}

type table struct {
	rows  int64
	token int64
}

// NewWarehouse returns an empty warehouse.
func NewWarehouse() *Warehouse { return &Warehouse{tables: map[string]*table{}} }

// shared is the warehouse every pipeline of this process writes to.
var shared = NewWarehouse()

// CreateTable creates name if it does not exist yet.
func (w *Warehouse) CreateTable(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tables[name] == nil {
		w.tables[name] = &table{}
	}
}

// Load appends rows to the table, fenced by the run's lease: a token smaller
// than the last one the table accepted means another replica has taken the
// pipeline over, and the write is refused.
func (w *Warehouse) Load(ctx context.Context, name string, rows int64) error {
	lease, _ := runtime.LeaseFromContext(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tables[name]
	if t == nil {
		t = &table{}
		w.tables[name] = t
	}
	if lease.Fenced() && lease.FencingToken < t.token {
		return fmt.Errorf("%w: table %s: token %d < %d", ErrStaleWriter, name, lease.FencingToken, t.token)
	}
	if lease.Fenced() {
		t.token = lease.FencingToken
	}
	t.rows += rows
	return nil
}

// Rows returns how many rows table name holds.
func (w *Warehouse) Rows(name string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.tables[name]; t != nil {
		return t.rows
	}
	return 0
}

// logRun reports a finished run with its lease, one line per run: the demo
// reads these lines to show which replica ran which slot.
func logRun(ctx context.Context, pipeline string, rows int64) {
	lease, _ := runtime.LeaseFromContext(ctx)
	slog.InfoContext(ctx, "pipeline ran",
		slog.String("pipeline", pipeline),
		slog.Int64("run_number", lease.RunNumber),
		slog.Int64("fencing_token", lease.FencingToken),
		slog.String("worker", lease.WorkerID),
		slog.Int64("rows", rows))
}
