package etl

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/sqlite"
	"github.com/agora-etl/agora/runtime"
)

// WarehouseEnv names the environment variable with the path of the SQLite
// file the pipelines load; every replica of the fleet must name the same
// file. The default is agora-example-warehouse.db in the temporary
// directory.
const WarehouseEnv = "ETL_WAREHOUSE_PATH"

// Warehouse is the destination of every pipeline: a SQLite database whose
// loads are fenced by the run's token with sqlite.FencedTx, so a replica
// whose lease was taken over cannot load anything after the new owner
// has. Each table holds one row per load.
type Warehouse struct {
	path string
	once sync.Once
	db   *sql.DB
	err  error
}

// NewWarehouse returns the warehouse in the SQLite file at path, opened at
// first use; "" means the file WarehouseEnv names.
func NewWarehouse(path string) *Warehouse { return &Warehouse{path: path} }

// shared is the warehouse every pipeline of this process writes to.
var shared = NewWarehouse("")

// Path returns the warehouse's file.
func (w *Warehouse) Path() string {
	if w.path != "" {
		return w.path
	}
	if p := os.Getenv(WarehouseEnv); p != "" {
		return p
	}
	return filepath.Join(os.TempDir(), "agora-example-warehouse.db")
}

func (w *Warehouse) open() (*sql.DB, error) {
	w.once.Do(func() { w.db, w.err = sqlite.Open(w.Path()) })
	return w.db, w.err
}

// Close closes the database.
func (w *Warehouse) Close() error {
	if db, err := w.open(); err == nil {
		return db.Close()
	}
	return nil
}

func createSQL(name string) string {
	return `CREATE TABLE IF NOT EXISTS "` + strings.ReplaceAll(name, `"`, `""`) + `" (run_number INTEGER, fencing_token INTEGER, worker TEXT, rows INTEGER NOT NULL)`
}

// CreateTable creates name if it does not exist yet.
func (w *Warehouse) CreateTable(ctx context.Context, name string) error {
	db, err := w.open()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, createSQL(name)); err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	return nil
}

// Load records a load of rows into the table, fenced by the run's lease:
// when a newer token has already loaded the table, another replica has
// taken the pipeline over, and the load is refused with an error wrapping
// fencing.ErrStaleWriter. A run without a fenced lease (a single worker
// without Redis) loads unfenced.
func (w *Warehouse) Load(ctx context.Context, name string, rows int64) error {
	db, err := w.open()
	if err != nil {
		return err
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	load := func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, createSQL(name)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO "`+strings.ReplaceAll(name, `"`, `""`)+`" VALUES (?, ?, ?, ?)`,
			lease.RunNumber, lease.FencingToken, lease.WorkerID, rows)
		return err
	}
	if lease.Fenced() {
		// A scheduled run loads once, so its load completes its slot: a
		// second run of the slot (Redis lost the completed mark) is then
		// refused with fencing.ErrSlotDone, and the pool moves on.
		return sqlite.FencedTx(ctx, db, name, lease.FencingToken, load, fencing.CompletesSlot())
	}
	slog.WarnContext(ctx, "unfenced load: the run holds no fenced lease", slog.String("table", name))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := load(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Rows returns how many rows the loads into table name added up to.
func (w *Warehouse) Rows(name string) (int64, error) {
	db, err := w.open()
	if err != nil {
		return 0, err
	}
	var n int64
	err = db.QueryRow(`SELECT coalesce(sum(rows), 0) FROM "` + strings.ReplaceAll(name, `"`, `""`) + `"`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("rows of %s: %w", name, err)
	}
	return n, nil
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
