package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/internal/sqlrec"
)

// SinkConfig configures the sqlite sink; the toml tags are its keys in an
// agora/v1 sink table.
type SinkConfig struct {
	// Path is the database file; it is created when missing.
	Path string `toml:"path"`
	// Table is the table to write to.
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
	// replaces rows by.
	Key []string `toml:"key"`
	// SlotColumn is the column replace mode writes each row's slot time
	// to (RFC 3339 text in UTC, as the sink writes every time), and
	// deletes a slot's rows by; required with replace, and not among
	// Columns. Index it.
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
func (c SinkConfig) Validate() error { return c.table().Check("path", c.Path) }

// SinkOption configures a Sink.
type SinkOption func(*Sink)

// WithLogger sets the logger of refusals and unfenced-write warnings
// (default slog.Default()).
func WithLogger(l *slog.Logger) SinkOption { return func(s *Sink) { s.logger = l } }

// SinkStats counts what a sink did.
type SinkStats struct {
	// Batches counts committed write transactions.
	Batches int64
	// Written counts records written.
	Written int64
	// Rejected counts records refused one by one (to the dead-letter queue).
	Rejected int64
	// Refused counts batches refused because their fencing token was stale.
	Refused int64
	// SlotDone counts batches (and completions) refused because another
	// run had completed their slot (fencing.ErrSlotDone).
	SlotDone int64
}

// Sink writes batches of records to a table, each batch one fenced
// transaction. It is safe for concurrent use.
type Sink struct {
	db       *sql.DB
	cfg      SinkConfig
	tbl      sqlrec.Table
	resource string
	logger   *slog.Logger

	createOnce sync.Mutex
	created    bool
	cols       sqlrec.ColumnCache // the table's columns, lower-case
	warnOnce   sync.Once

	beforeCommit func() // test hook: runs inside the transaction, after the rows

	batches, written, rejected, refused, slotDone atomic.Int64
}

// NewSink returns a sink writing to db (open it with Open). cfg.Path is
// not used.
func NewSink(db *sql.DB, cfg SinkConfig, opts ...SinkOption) (*Sink, error) {
	if db == nil {
		return nil, errors.New("sqlite: NewSink: nil database")
	}
	if err := cfg.table().Check("path", "-"); err != nil {
		return nil, fmt.Errorf("sqlite: sink: %w", err)
	}
	if cfg.Mode == "" {
		cfg.Mode = sqlrec.ModeInsert
	}
	s := &Sink{db: db, cfg: cfg, tbl: cfg.table(), resource: cfg.table().ResourceName(), logger: slog.Default()}
	s.cols.Read, s.cols.Fold = s.readColumns, true
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// ReplacesSlots reports whether a re-run of a slot replaces the rows its
// earlier run wrote (etl.SlotReplacer): true for upsert (a re-run that
// writes the same keys) and replace, false for insert.
func (s *Sink) ReplacesSlots() bool { return s.tbl.ReplacesSlots() }

// replaceSlot returns, for replace mode, the value to write to the slot
// column (the slot time, as the sink writes times), or NeedSlot's error
// when the run is not a fenced slot run; for the other modes, nil.
func (s *Sink) replaceSlot(w sqlrec.Writer, unfenced bool) (any, error) {
	if !s.tbl.Replace() {
		return nil, nil
	}
	if unfenced || !w.IsSlot {
		return nil, sqlrec.NeedSlot("sqlite", s.cfg.Table, unfenced)
	}
	return value(sqlrec.SlotStartTime(w.Slot))
}

// deleteSlot deletes the rows of the slot at the run's first write of it
// (replace mode); slot is replaceSlot's value.
func (s *Sink) deleteSlot(ctx context.Context, tx *sql.Tx, slot any) error {
	q := "DELETE FROM " + sqlrec.QuoteIdent(s.cfg.Table) + " WHERE " + sqlrec.QuoteIdent(s.cfg.SlotColumn) + " = ?1"
	if _, err := tx.ExecContext(ctx, q, slot); err != nil {
		return fmt.Errorf("sqlite: table %s: delete the rows of slot %v: %w", s.cfg.Table, slot, err)
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
// with fencing.ErrUnfenced unless AllowUnfenced. Records the database
// refuses one by one (a constraint, a bad value) are left out and
// reported in an *etl.RejectedError; the others are committed. Any other
// error rolls the whole batch back.
func (s *Sink) Write(ctx context.Context, records []etl.Record) error {
	if len(records) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: table %s: not writing: %w", s.cfg.Table, err)
	}
	token, unfenced, err := fencing.Token(ctx, s.resource, s.cfg.AllowUnfenced)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	w := writer(ctx, s.resource, token)
	slot, err := s.replaceSlot(w, unfenced)
	if err != nil {
		return err
	}
	if s.tbl.Replace() {
		if err := sqlrec.CheckSlotField("sqlite", s.cfg.Table, records, s.cfg.SlotColumn, true); err != nil {
			return err
		}
	}
	if unfenced {
		s.warnOnce.Do(func() { fencing.WarnUnfenced(ctx, s.logger, s.resource) })
	} else if err := ensureFencing(ctx, s.db); err != nil {
		return err
	}
	if err := s.ensureTable(ctx, sqlrec.Columns(s.cfg.Columns, records), records); err != nil {
		return err
	}
	fit, _ := s.cols.Fit(ctx, s.cfg.Table, s.cfg.Columns, records, s.cfg.OnUnknownField)
	cols := fit.Cols
	if len(cols) == 0 && fit.Len(len(records)) > 0 {
		return fmt.Errorf("sqlite: table %s: the records have no fields to write", s.cfg.Table)
	}
	var rejections []etl.Rejection
	err = inTx(ctx, s.db, func(tx *sql.Tx) error {
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
		var err error
		if fit.Len(len(records)) > 0 { // with every record rejected, the fencing rules still apply
			rejections, err = s.writeRows(ctx, tx, cols, records, fit.Keep, slot)
		}
		if err == nil && (len(rejections) > 0 || len(fit.Rejections) > 0) && etl.RejectsFailRun(ctx) {
			// The run fails on these: roll the rest of the batch back
			// rather than leave a failed run's rows.
			return &etl.RejectedError{Rejections: sqlrec.MergeRejections(fit.Rejections, rejections)}
		}
		if err == nil && s.beforeCommit != nil {
			s.beforeCommit()
		}
		return err
	})
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
		return fmt.Errorf("sqlite: %w", err)
	}
	if _, err := s.replaceSlot(writer(ctx, s.resource, token), unfenced); err != nil {
		return err
	}
	if unfenced {
		return pingErr(ctx, s.db)
	}
	return ensureFencing(ctx, s.db)
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
	var onClaim func(*sql.Tx) error
	if s.tbl.Replace() {
		onClaim = func(tx *sql.Tx) error { return s.deleteSlot(ctx, tx, slot) }
	}
	err = completeSlot(ctx, s.db, s.logger, w, onClaim)
	s.countRefusal(err)
	return err
}

// maxParams stays below SQLite's limit of bound parameters per statement.
const maxParams = 32000

// maxRowsPerStatement bounds a multi-row INSERT; past a few hundred rows
// longer statements stop paying off.
const maxRowsPerStatement = 256

// writeRows inserts the records at keep (nil: all) in multi-row
// statements; slot, when not nil (replace mode), goes to the slot column of
// every row. A statement SQLite
// refuses because of one row's values is undone by SQLite alone (the
// transaction stays), and its rows are then written one by one, so only
// the bad rows are rejected.
func (s *Sink) writeRows(ctx context.Context, tx *sql.Tx, cols []string, records []etl.Record, keep []int, slot any) ([]etl.Rejection, error) {
	ins := cols
	if slot != nil {
		ins = append(slices.Clip(cols), s.cfg.SlotColumn)
	}
	n := len(records)
	if keep != nil {
		n = len(keep)
	}
	at := func(k int) int {
		if keep != nil {
			return keep[k]
		}
		return k
	}
	per := max(1, min(maxRowsPerStatement, maxParams/len(ins)))
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	prepare := func(n int) (*sql.Stmt, error) {
		if st := stmts[n]; st != nil {
			return st, nil
		}
		st, err := tx.PrepareContext(ctx, s.insertSQL(ins, n))
		if err != nil {
			return nil, fmt.Errorf("sqlite: prepare insert into %s: %w", s.cfg.Table, err)
		}
		stmts[n] = st
		return st, nil
	}
	var rejections []etl.Rejection
	args := make([]any, 0, per*len(ins))
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		args = args[:0]
		bad := false
		for k := start; k < end; k++ {
			row, err := rowArgs(records[at(k)], cols, slot)
			if err != nil {
				bad = true
				break
			}
			args = append(args, row...)
		}
		if !bad {
			st, err := prepare(end - start)
			if err != nil {
				return nil, err
			}
			_, err = st.ExecContext(ctx, args...)
			if err == nil {
				continue
			}
			if !rowError(err) {
				return nil, fmt.Errorf("sqlite: insert into %s: %w", s.cfg.Table, err)
			}
		}
		// One row at a time, to find the rows SQLite refuses.
		one, err := prepare(1)
		if err != nil {
			return nil, err
		}
		for k := start; k < end; k++ {
			row, err := rowArgs(records[at(k)], cols, slot)
			if err == nil {
				_, err = one.ExecContext(ctx, row...)
				if err != nil && !rowError(err) {
					return nil, fmt.Errorf("sqlite: insert into %s: %w", s.cfg.Table, err)
				}
			}
			if err != nil {
				rejections = append(rejections, etl.Rejection{Index: at(k), Err: fmt.Errorf("sqlite: table %s: %w", s.cfg.Table, err)})
			}
		}
	}
	return rejections, nil
}

// rowArgs is a record's values of cols, and slot after them when not nil.
func rowArgs(r etl.Record, cols []string, slot any) ([]any, error) {
	row := make([]any, len(cols), len(cols)+1)
	for i, c := range cols {
		v, err := value(r[c])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", c, err)
		}
		row[i] = v
	}
	if slot != nil {
		row = append(row, slot)
	}
	return row, nil
}

// insertSQL is the INSERT of n rows, with its ON CONFLICT clause for
// upsert: every column not in the key is replaced.
func (s *Sink) insertSQL(cols []string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", sqlrec.QuoteIdent(s.cfg.Table), sqlrec.QuoteList(cols))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			// Plain ? placeholders: the driver binds numbered ones (?N)
			// by searching the arguments, quadratic in a long statement.
			b.WriteByte('?')
		}
		b.WriteByte(')')
	}
	if s.tbl.Upsert() {
		fmt.Fprintf(&b, " ON CONFLICT (%s) DO ", sqlrec.QuoteList(s.cfg.Key))
		var sets []string
		for _, c := range cols {
			if !slices.Contains(s.cfg.Key, c) {
				q := sqlrec.QuoteIdent(c)
				sets = append(sets, q+" = excluded."+q)
			}
		}
		if len(sets) == 0 {
			b.WriteString("NOTHING")
		} else {
			b.WriteString("UPDATE SET " + strings.Join(sets, ", "))
		}
	}
	return b.String()
}

// ensureTable creates the table on the first write when CreateTable is set.
func (s *Sink) ensureTable(ctx context.Context, cols []string, records []etl.Record) error {
	if !s.cfg.CreateTable {
		return nil
	}
	s.createOnce.Lock()
	defer s.createOnce.Unlock()
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
		defs = append(defs, sqlrec.QuoteIdent(s.cfg.SlotColumn)+" TEXT NOT NULL")
	}
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s)", sqlrec.QuoteIdent(s.cfg.Table), strings.Join(defs, ", "))
	if _, err := s.db.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("sqlite: create table %s: %w", s.cfg.Table, err)
	}
	s.created = true
	return nil
}

// readColumns reads the table's columns, lower-case: SQLite matches column
// names without regard to case. A table that does not exist yet has none.
func (s *Sink) readColumns(ctx context.Context) (map[string]bool, error) {
	schema, table := "main", s.cfg.Table
	if i := strings.IndexByte(table, '.'); i >= 0 {
		schema, table = table[:i], table[i+1:]
	}
	rows, err := s.db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?1, ?2)", table, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols[strings.ToLower(name)] = false
	}
	return cols, rows.Err()
}

// pingErr reaches the database.
func pingErr(ctx context.Context, db *sql.DB) error {
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}
