package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/internal/sqlrec"
)

// SinkConfig configures the postgres sink; the toml tags are its keys in
// an agora/v1 sink table.
type SinkConfig struct {
	// URL is the connection string (postgres://user:password@host/db or
	// key=value form). It is never logged.
	URL string `toml:"url"`
	// Table is the table to write to, optionally schema-qualified.
	Table string `toml:"table"`
	// Columns are the fields written, each to the column of the same name;
	// empty means every field of the batch's records.
	Columns []string `toml:"columns"`
	// Mode is "insert" (the default), "upsert" or "replace". Replace
	// inserts, writing the run's slot time to SlotColumn, and a slot run's
	// first write of its slot deletes, in the same transaction, the rows
	// whose SlotColumn holds that slot: a re-run of the slot (a take-over
	// of an interrupted run, a reprocess) leaves its own rows only.
	Mode string `toml:"mode"`
	// Key lists the columns of the primary key or unique index an upsert
	// replaces rows by (its ON CONFLICT target).
	Key []string `toml:"key"`
	// SlotColumn is the column replace mode writes each row's slot time
	// to (a timestamptz), and deletes a slot's rows by; required with
	// replace, and not among Columns. Index it.
	SlotColumn string `toml:"slot_column"`
	// CreateTable creates the table at the first write when it is missing,
	// with a column per field typed from the first batch's values and, for
	// upsert, key as its primary key.
	CreateTable bool `toml:"create_table"`
	// Resource names the fenced resource (default: the table name).
	Resource string `toml:"resource"`
	// AllowUnfenced lets a run without a fenced lease write, unfenced,
	// with a warning; by default such a run's writes are refused.
	AllowUnfenced bool `toml:"allow_unfenced"`
	// OnUnknownField says what happens, when Columns is empty, to a record
	// with a field the table has no column for: "reject" (the default)
	// sends the record alone to the dead-letter queue, with an error naming
	// the field and the table, and writes the rest of the batch; "ignore"
	// drops the field and writes the row.
	OnUnknownField string `toml:"on_unknown_field"`
}

// RequiresFencedLease reports whether the sink refuses the writes of a run
// that holds no fenced lease (allow_unfenced not set): without a
// coordinator every such run fails, which agora check warns about.
func (c SinkConfig) RequiresFencedLease() bool { return !c.AllowUnfenced }

func (c SinkConfig) table() sqlrec.Table {
	return sqlrec.Table{Name: c.Table, Columns: c.Columns, Mode: c.Mode, Key: c.Key, Resource: c.Resource, OnUnknownField: c.OnUnknownField, SlotColumn: c.SlotColumn}
}

// Describe gives the table, mode and key for `agora check`'s summary
// (etl.Describer).
func (c SinkConfig) Describe() []string { return c.table().Describe() }

// Validate reports every problem with the configuration, each a
// *etl.FieldError naming its key.
func (c SinkConfig) Validate() error { return c.table().Check("url", c.URL) }

// SinkOption configures a Sink.
type SinkOption func(*Sink)

// WithLogger sets the logger of refusals and unfenced-write warnings
// (default slog.Default()).
func WithLogger(l *slog.Logger) SinkOption { return func(s *Sink) { s.logger = l } }

// SinkStats counts what a sink did.
type SinkStats struct {
	// Batches counts committed write transactions.
	Batches int64
	// Written counts records written (for upsert, including records a
	// later record of the same batch with the same key replaced).
	Written int64
	// Rejected counts records refused one by one (to the dead-letter queue).
	Rejected int64
	// Refused counts batches refused because their fencing token was stale.
	Refused int64
	// SlotDone counts batches (and completions) refused because another
	// run had completed their slot (fencing.ErrSlotDone).
	SlotDone int64
}

// upsertPath is how an upsert batch reaches the table.
type upsertPath int

const (
	// upsertAuto picks by batch size: upsertStaged from stagedMinRows
	// rows on, upsertMultiRow below.
	upsertAuto upsertPath = iota
	// upsertMultiRow sends INSERT ... VALUES (...), (...) ON CONFLICT
	// statements of many rows each.
	upsertMultiRow
	// upsertStaged COPYs the batch into a temporary table and moves it
	// with one INSERT ... SELECT ... ON CONFLICT.
	upsertStaged
)

// Sink writes batches of records to a table, each batch one fenced
// transaction. It is safe for concurrent use.
type Sink struct {
	pool     *pgxpool.Pool
	cfg      SinkConfig
	tbl      sqlrec.Table
	ident    pgx.Identifier
	resource string
	logger   *slog.Logger
	upsertBy upsertPath

	createMu sync.Mutex
	created  bool
	cols     sqlrec.ColumnCache // the table's columns (true: integer)
	warnOnce sync.Once

	beforeCommit func() // test hook: runs inside the transaction, after the rows

	batches, written, rejected, refused, slotDone atomic.Int64
}

// NewSink returns a sink writing through pool. cfg.URL is not used.
func NewSink(pool *pgxpool.Pool, cfg SinkConfig, opts ...SinkOption) (*Sink, error) {
	if pool == nil {
		return nil, errors.New("postgres: NewSink: nil pool")
	}
	if err := cfg.table().Check("url", "-"); err != nil {
		return nil, fmt.Errorf("postgres: sink: %w", err)
	}
	if cfg.Mode == "" {
		cfg.Mode = sqlrec.ModeInsert
	}
	s := &Sink{pool: pool, cfg: cfg, tbl: cfg.table(), ident: pgx.Identifier(strings.Split(cfg.Table, ".")),
		resource: cfg.table().ResourceName(), logger: slog.Default(), upsertBy: defaultUpsertPath}
	s.cols.Read = s.readColumns
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// defaultUpsertPath picks the faster upsert path for each batch, as
// measured by BenchmarkWrite (BENCHMARKS.md): the staging table's fixed
// cost per batch (a COPY and a statement more) pays off only for large
// batches.
const defaultUpsertPath = upsertAuto

// stagedMinRows is the batch size from which staging beats multi-row
// statements in BenchmarkWrite.
const stagedMinRows = 2000

// ReplacesSlots reports whether a re-run of a slot replaces the rows its
// earlier run wrote (etl.SlotReplacer): true for upsert (a re-run that
// writes the same keys) and replace, false for insert.
func (s *Sink) ReplacesSlots() bool { return s.tbl.ReplacesSlots() }

// replaceSlot returns, for replace mode, the slot time to write to the
// slot column, or NeedSlot's error when the run is not a fenced slot run;
// for the other modes, the zero time.
func (s *Sink) replaceSlot(w sqlrec.Writer, unfenced bool) (time.Time, error) {
	if !s.tbl.Replace() {
		return time.Time{}, nil
	}
	if unfenced || !w.IsSlot {
		return time.Time{}, sqlrec.NeedSlot("postgres", s.cfg.Table, unfenced)
	}
	return sqlrec.SlotStartTime(w.Slot), nil
}

// deleteSlot deletes the rows of slot at the run's first write of it
// (replace mode).
func (s *Sink) deleteSlot(ctx context.Context, tx pgx.Tx, slot time.Time) error {
	q := "DELETE FROM " + s.ident.Sanitize() + " WHERE " + sqlrec.QuoteIdent(s.cfg.SlotColumn) + " = $1"
	if _, err := tx.Exec(ctx, q, slot); err != nil {
		return fmt.Errorf("postgres: table %s: delete the rows of slot %s: %w", s.cfg.Table, slot.Format(time.RFC3339), err)
	}
	return nil
}

// Stats returns the sink's counts so far.
func (s *Sink) Stats() SinkStats {
	return SinkStats{Batches: s.batches.Load(), Written: s.written.Load(), Rejected: s.rejected.Load(), Refused: s.refused.Load(), SlotDone: s.slotDone.Load()}
}

// Write writes records in one transaction fenced by the run's token (see
// the package doc). A stale token fails the whole batch with an error
// wrapping fencing.ErrStaleWriter, a slot run whose slot another run
// completed with one wrapping fencing.ErrSlotDone, and a run without a fenced lease fails
// with fencing.ErrUnfenced unless AllowUnfenced; neither is retried here,
// so a stale writer costs one failed run, after which the pool's error
// backoff applies. When the server refuses rows one by one (a constraint,
// a bad value) the batch is written again, in a new transaction, row by
// row under savepoints; the refused rows are left out and reported in an
// *etl.RejectedError. Any other error rolls the whole batch back.
func (s *Sink) Write(ctx context.Context, records []etl.Record) error {
	if len(records) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: table %s: not writing: %w", s.cfg.Table, err)
	}
	token, unfenced, err := fencing.Token(ctx, s.resource, s.cfg.AllowUnfenced)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	w := writer(ctx, s.resource, token)
	slot, err := s.replaceSlot(w, unfenced)
	if err != nil {
		return err
	}
	if s.tbl.Replace() {
		if err := sqlrec.CheckSlotField("postgres", s.cfg.Table, records, s.cfg.SlotColumn, false); err != nil {
			return err
		}
	}
	if unfenced {
		s.warnOnce.Do(func() { fencing.WarnUnfenced(ctx, s.logger, s.resource) })
	} else if err := ensureFencing(ctx, s.pool); err != nil {
		return err
	}
	if err := s.ensureTable(ctx, sqlrec.Columns(s.cfg.Columns, records), records); err != nil {
		return err
	}
	fit, tcols := s.cols.Fit(ctx, s.cfg.Table, s.cfg.Columns, records, s.cfg.OnUnknownField)
	cols := fit.Cols
	if len(cols) == 0 && fit.Len(len(records)) > 0 {
		return fmt.Errorf("postgres: table %s: the records have no fields to write", s.cfg.Table)
	}
	// For upsert, a key twice in one batch would make ON CONFLICT touch a
	// row twice; the last record per key is what sequential writes leave.
	idx := fit.Keep
	if s.tbl.Upsert() {
		idx = sqlrec.LastPerKeyIn(records, idx, s.cfg.Key)
	}
	rows := &batchRows{recs: records, idx: idx, cols: cols, intCols: tcols}
	if s.tbl.Replace() {
		rows.slotCol, rows.slot = s.cfg.SlotColumn, slot
	}
	tx := func(write func(pgx.Tx) error) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if !unfenced {
				_, claimed, err := fence(ctx, tx, s.logger, w)
				if err != nil {
					return err
				}
				if claimed && s.tbl.Replace() {
					if err := s.deleteSlot(ctx, tx, slot); err != nil {
						return err
					}
				}
			}
			if err := write(tx); err != nil {
				return err
			}
			if s.beforeCommit != nil {
				s.beforeCommit()
			}
			if err := ctx.Err(); err != nil {
				// The run ended (its timeout) while the rows were
				// written: they are not committed.
				return fmt.Errorf("postgres: table %s: not committing: %w", s.cfg.Table, err)
			}
			return nil
		})
	}
	if len(fit.Rejections) > 0 && etl.RejectsFailRun(ctx) {
		// The run fails on these: none of the batch is written.
		return &etl.RejectedError{Rejections: fit.Rejections}
	}
	byCopy := !s.tbl.Upsert() || s.upsertBy == upsertStaged || s.upsertBy == upsertAuto && rows.len() >= stagedMinRows
	err = tx(func(tx pgx.Tx) error {
		if rows.len() == 0 {
			return nil // every record rejected: the fencing rules still apply
		}
		return s.writeBulk(ctx, tx, rows, byCopy)
	})
	if err != nil && byCopy && copyEncodeFailed(ctx, err) {
		// COPY's binary format takes no text for typed columns (a
		// timestamp written as a string); statements let the server parse
		// it.
		err = tx(func(tx pgx.Tx) error { return s.writeBulk(ctx, tx, rows, false) })
	}
	var rejections []etl.Rejection
	if err != nil && rowLevel(ctx, err) {
		err = tx(func(tx pgx.Tx) error {
			var err error
			rejections, err = s.writeEach(ctx, tx, rows)
			if err == nil && len(rejections) > 0 && etl.RejectsFailRun(ctx) {
				// The run fails on these: roll the rest of the batch
				// back rather than leave a failed run's rows.
				return &etl.RejectedError{Rejections: rejections}
			}
			return err
		})
	}
	if err != nil {
		s.countRefusal(err)
		if !errors.Is(err, fencing.ErrStaleWriter) && !errors.Is(err, fencing.ErrSlotDone) && !errors.Is(err, fencing.ErrSlotForgotten) && !errors.Is(err, fencing.ErrSlotBusy) {
			s.cols.Forget() // the table may have changed: read it again
		}
		return err
	}
	rejections = sqlrec.MergeRejections(fit.Rejections, rejections)
	s.batches.Add(1)
	s.written.Add(int64(len(records) - len(rejections)))
	if len(rejections) > 0 {
		s.rejected.Add(int64(len(rejections)))
		return &etl.RejectedError{Rejections: rejections}
	}
	return nil
}

// Open checks, before the run reads its first record, that the sink can
// write: the run holds the fenced lease the sink needs (or unfenced writes
// are allowed) and the database answers, with its fencing tables made. A
// run that would fail at this sink's first write so fails before it wrote
// anywhere else.
func (s *Sink) Open(ctx context.Context) error {
	token, unfenced, err := fencing.Token(ctx, s.resource, s.cfg.AllowUnfenced)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if _, err := s.replaceSlot(writer(ctx, s.resource, token), unfenced); err != nil {
		return err
	}
	if unfenced {
		return pingErr(ctx, s.pool)
	}
	return ensureFencing(ctx, s.pool)
}

// countRefusal counts a batch refused by the fencing rules.
func (s *Sink) countRefusal(err error) {
	switch {
	case errors.Is(err, fencing.ErrStaleWriter):
		s.refused.Add(1)
	case errors.Is(err, fencing.ErrSlotDone):
		s.slotDone.Add(1)
	}
}

// Complete marks the run's slot completed in the slot ledger, in a
// transaction of its own (see the package doc); etl.New's pipeline calls it
// after the run's last batch was written, flushed and acknowledged, before
// the run reports success. Runs that are not slot runs, and unfenced runs,
// have nothing to mark (in replace mode they fail, as their writes do). An
// error (fencing.ErrSlotDone: another run completed the slot first;
// fencing.ErrStaleWriter: a newer run took it over) fails the run. In
// replace mode a run that completes its slot without having written to
// the table (its source had nothing) still deletes the rows of the slot's
// earlier run, in the transaction that records the slot.
func (s *Sink) Complete(ctx context.Context) error {
	token, unfenced, err := fencing.Token(ctx, s.resource, true)
	if err != nil {
		return err
	}
	w := writer(ctx, s.resource, token)
	slot, err := s.replaceSlot(w, unfenced)
	if err != nil || unfenced {
		return err
	}
	var onClaim func(pgx.Tx) error
	if s.tbl.Replace() {
		onClaim = func(tx pgx.Tx) error { return s.deleteSlot(ctx, tx, slot) }
	}
	err = completeSlot(ctx, s.pool, s.logger, w, onClaim)
	s.countRefusal(err)
	return err
}

// batchRows is a batch's records (those at idx, or all) in column order.
// Values are converted as they are sent, into one reused row, so a batch
// costs no copy of itself.
type batchRows struct {
	recs    []etl.Record
	idx     []int
	cols    []string
	intCols map[string]bool
	// slotCol, when set (replace mode), is one more column, after cols,
	// that every row gets slot in.
	slotCol string
	slot    time.Time
}

// columns returns the columns a row is inserted into.
func (b *batchRows) columns() []string {
	if b.slotCol == "" {
		return b.cols
	}
	return append(slices.Clip(b.cols), b.slotCol)
}

func (b *batchRows) len() int {
	if b.idx != nil {
		return len(b.idx)
	}
	return len(b.recs)
}

// index returns the batch index of the k-th row.
func (b *batchRows) index(k int) int {
	if b.idx != nil {
		return b.idx[k]
	}
	return k
}

// values appends the k-th row's values to dst.
func (b *batchRows) values(k int, dst []any) ([]any, error) {
	r := b.recs[b.index(k)]
	for _, c := range b.cols {
		v, err := value(r[c], b.intCols[c])
		if err != nil {
			return dst, fmt.Errorf("postgres: field %q: %w", c, err)
		}
		dst = append(dst, v)
	}
	if b.slotCol != "" {
		dst = append(dst, b.slot)
	}
	return dst, nil
}

// copySource feeds rows to CopyFrom.
type copySource struct {
	rows *batchRows
	k    int
	row  []any
	err  error
}

func (c *copySource) Next() bool { c.k++; return c.err == nil && c.k <= c.rows.len() }
func (c *copySource) Values() ([]any, error) {
	c.row, c.err = c.rows.values(c.k-1, c.row[:0])
	return c.row, c.err
}
func (c *copySource) Err() error { return c.err }

// writeBulk writes every row at once: byCopy, with COPY (straight into
// the table for insert; for upsert into a staging table, then one
// INSERT ... SELECT ... ON CONFLICT); otherwise with multi-row INSERT (...
// ON CONFLICT) statements.
func (s *Sink) writeBulk(ctx context.Context, tx pgx.Tx, rows *batchRows, byCopy bool) error {
	cols := rows.columns()
	switch {
	case byCopy && s.tbl.Upsert():
		return s.writeStaged(ctx, tx, rows)
	case byCopy:
		if _, err := tx.CopyFrom(ctx, s.ident, cols, &copySource{rows: rows}); err != nil {
			return fmt.Errorf("postgres: copy into %s: %w", s.cfg.Table, err)
		}
		return nil
	}
	per := max(1, min(maxRowsPerStatement, maxParams/len(cols)))
	args := make([]any, 0, per*len(cols))
	for start := 0; start < rows.len(); start += per {
		n := min(per, rows.len()-start)
		args = args[:0]
		for k := start; k < start+n; k++ {
			var err error
			if args, err = rows.values(k, args); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, s.insertSQL(cols, n), args...); err != nil {
			return fmt.Errorf("postgres: insert into %s: %w", s.cfg.Table, err)
		}
	}
	return nil
}

// maxParams is PostgreSQL's limit of bind parameters per statement.
const maxParams = 65535

// maxRowsPerStatement bounds a multi-row INSERT.
const maxRowsPerStatement = 1000

func (s *Sink) writeStaged(ctx context.Context, tx pgx.Tx, rows *batchRows) error {
	cols := rows.columns()
	stage := s.stageName(cols)
	// A session's temporary table outlives the transaction; ON COMMIT
	// DELETE ROWS truncates it at every commit (a rollback empties it
	// too), so it is made once per connection, never shows another batch's
	// rows, and never fills with dead rows, which DELETE would leave in a
	// table no autovacuum visits.
	create := fmt.Sprintf("CREATE TEMP TABLE IF NOT EXISTS %s ON COMMIT DELETE ROWS AS SELECT %s FROM %s WITH NO DATA",
		stage, sqlrec.QuoteList(cols), s.ident.Sanitize())
	if _, err := tx.Exec(ctx, create); err != nil {
		return fmt.Errorf("postgres: staging table for %s: %w", s.cfg.Table, err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{stage}, cols, &copySource{rows: rows}); err != nil {
		return fmt.Errorf("postgres: copy into staging table for %s: %w", s.cfg.Table, err)
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s%s", s.ident.Sanitize(), sqlrec.QuoteList(cols), sqlrec.QuoteList(cols), stage, s.conflictSQL(cols))
	if _, err := tx.Exec(ctx, q); err != nil {
		return fmt.Errorf("postgres: upsert into %s: %w", s.cfg.Table, err)
	}
	return nil
}

// stageName names the staging table of one table and column list.
func (s *Sink) stageName(cols []string) string {
	h := fnv.New64a()
	h.Write([]byte(s.cfg.Table))
	for _, c := range cols {
		h.Write([]byte{0})
		h.Write([]byte(c))
	}
	return fmt.Sprintf("agora_stage_%x", h.Sum64())
}

// writeEach writes rows one at a time, each under a savepoint, and
// returns the rows the server refused.
func (s *Sink) writeEach(ctx context.Context, tx pgx.Tx, rows *batchRows) ([]etl.Rejection, error) {
	one := s.insertSQL(rows.columns(), 1)
	var rejections []etl.Rejection
	var vals []any
	for k := range rows.len() {
		var err error
		if vals, err = rows.values(k, vals[:0]); err != nil {
			rejections = append(rejections, etl.Rejection{Index: rows.index(k), Err: err})
			continue
		}
		sp, err := tx.Begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("postgres: savepoint: %w", err)
		}
		_, err = sp.Exec(ctx, one, vals...)
		if err == nil {
			if err := sp.Commit(ctx); err != nil {
				return nil, fmt.Errorf("postgres: release savepoint: %w", err)
			}
			continue
		}
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return nil, fmt.Errorf("postgres: insert into %s: %w (rollback to savepoint: %v)", s.cfg.Table, err, rbErr)
		}
		if !rowLevel(ctx, err) {
			return nil, fmt.Errorf("postgres: insert into %s: %w", s.cfg.Table, err)
		}
		rejections = append(rejections, etl.Rejection{Index: rows.index(k), Err: fmt.Errorf("postgres: table %s: %w", s.cfg.Table, err)})
	}
	return rejections, nil
}

// insertSQL is the INSERT of n rows, with its ON CONFLICT clause for
// upsert.
func (s *Sink) insertSQL(cols []string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", s.ident.Sanitize(), sqlrec.QuoteList(cols))
	p := 1
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "$%d", p)
			p++
		}
		b.WriteByte(')')
	}
	b.WriteString(s.conflictSQL(cols))
	return b.String()
}

// conflictSQL is the ON CONFLICT clause of an upsert (every column not in
// the key is replaced), or "" for insert.
func (s *Sink) conflictSQL(cols []string) string {
	if !s.tbl.Upsert() {
		return ""
	}
	var sets []string
	for _, c := range cols {
		if !slices.Contains(s.cfg.Key, c) {
			q := sqlrec.QuoteIdent(c)
			sets = append(sets, q+" = EXCLUDED."+q)
		}
	}
	clause := " ON CONFLICT (" + sqlrec.QuoteList(s.cfg.Key) + ") DO "
	if len(sets) == 0 {
		return clause + "NOTHING"
	}
	return clause + "UPDATE SET " + strings.Join(sets, ", ")
}

// ensureTable creates the table on the first write when CreateTable is set.
func (s *Sink) ensureTable(ctx context.Context, cols []string, records []etl.Record) error {
	if !s.cfg.CreateTable {
		return nil
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if s.created {
		return nil
	}
	defs := make([]string, len(cols))
	for i, c := range cols {
		var sample any
		for _, r := range records {
			if v := r[c]; v != nil {
				sample = v
				break
			}
		}
		defs[i] = sqlrec.QuoteIdent(c) + " " + columnType(sample)
	}
	if s.tbl.Upsert() {
		defs = append(defs, "PRIMARY KEY ("+sqlrec.QuoteList(s.cfg.Key)+")")
	}
	if s.tbl.Replace() {
		defs = append(defs, sqlrec.QuoteIdent(s.cfg.SlotColumn)+" timestamptz NOT NULL")
	}
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s)", s.ident.Sanitize(), strings.Join(defs, ", "))
	if err := createIfMissing(func() error { _, err := s.pool.Exec(ctx, ddl); return err }); err != nil {
		return fmt.Errorf("postgres: create table %s: %w", s.cfg.Table, err)
	}
	s.created = true
	return nil
}

// readColumns reads the table's columns, each true when it is an integer
// column: pgx truncates a float64 written to an integer column, so the
// sink checks such values itself (JSON numbers decode as float64) and
// rejects 3.5 instead of storing 3. A table that does not exist yet has
// none.
func (s *Sink) readColumns(ctx context.Context) (map[string]bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT attname, atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) FROM pg_attribute
WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, s.ident.Sanitize())
	if err != nil {
		return nil, err
	}
	type col struct {
		Name    string
		Integer bool
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[col])
	if err != nil {
		return nil, err
	}
	cols := make(map[string]bool, len(got))
	for _, c := range got {
		cols[c.Name] = c.Integer
	}
	return cols, nil
}

// pingErr reaches the database.
func pingErr(ctx context.Context, pool *pgxpool.Pool) error {
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
