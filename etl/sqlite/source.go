package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sqlrec"
	"github.com/agora-etl/agora/runtime"
)

// SourceConfig configures the sqlite source; the toml tags are its keys in
// an agora/v1 source table.
type SourceConfig struct {
	// Path is the database file.
	Path string `toml:"path"`
	// Query is the SELECT whose rows are the run's records, one field per
	// column. It may use :run_number, :fencing_token, :slot_time,
	// :last_slot_time and :param_<name>, the run's parameter <name> as
	// text (see runtime.ParamsFromContext).
	Query string `toml:"query"`
}

// RunParams returns the run parameters the query reads (etl.ParamReader),
// so an agora/v1 file can check that its pipeline declares them.
func (c SourceConfig) RunParams() []etl.ParamUse {
	q, err := sqlrec.ParseQuery(c.Query, sqlrec.QuestionPlaceholder)
	if err != nil {
		return nil // Validate reports it
	}
	var out []etl.ParamUse
	for _, name := range q.RunParams() {
		out = append(out, etl.ParamUse{Key: "query", Name: name})
	}
	return out
}

// Validate reports every problem with the configuration, each a
// *etl.FieldError naming its key.
func (c SourceConfig) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Path) == "" {
		errs = append(errs, etl.FieldErrorf("path", "is required"))
	}
	if strings.TrimSpace(c.Query) == "" {
		errs = append(errs, etl.FieldErrorf("query", "is required"))
	} else if _, err := sqlrec.ParseQuery(c.Query, sqlrec.QuestionPlaceholder); err != nil {
		errs = append(errs, &etl.FieldError{Key: "query", Err: err})
	}
	return errors.Join(errs...)
}

// stateTable remembers, per pipeline, the last slot whose records every
// sink accepted: what :last_slot_time reads.
const stateTable = "agora_source_state"

const createState = `CREATE TABLE IF NOT EXISTS ` + stateTable + ` (pipeline_id TEXT PRIMARY KEY, last_slot_us INTEGER NOT NULL)`

// Source streams the rows of one query in batches: it keeps the query's
// rows open between reads instead of loading them whole. A Source serves
// one run; build a new one per run.
type Source struct {
	db    *sql.DB
	query sqlrec.Query

	mu       sync.Mutex
	rows     *sql.Rows
	cols     []string
	has      bool // rows holds a row not yet returned
	done     bool
	lease    runtime.Lease
	slotTime time.Time
}

// NewSource returns a source reading cfg.Query from db. cfg.Path is not
// used.
func NewSource(db *sql.DB, cfg SourceConfig) (*Source, error) {
	if db == nil {
		return nil, errors.New("sqlite: NewSource: nil database")
	}
	q, err := sqlrec.ParseQuery(cfg.Query, sqlrec.QuestionPlaceholder)
	if err != nil {
		return nil, fmt.Errorf("sqlite: source query: %w", err)
	}
	return &Source{db: db, query: q}, nil
}

// Read returns the next batch of at most max rows, and io.EOF after the
// last. The last batch's Ack records the run's slot as the pipeline's
// last completed one, which the next run's :last_slot_time reads.
func (s *Source) Read(ctx context.Context, max int) (etl.Batch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return etl.Batch{}, io.EOF
	}
	if s.rows == nil {
		if err := s.start(ctx); err != nil {
			s.closeLocked()
			return etl.Batch{}, err
		}
	}
	max = maxBatch(max)
	batch := make([]etl.Record, 0, min(max, 1024))
	for s.has && len(batch) < max {
		rec, err := s.scan()
		if err != nil {
			s.closeLocked()
			return etl.Batch{}, err
		}
		batch = append(batch, rec)
		s.has = s.rows.Next()
	}
	if s.has {
		return etl.Batch{Records: batch}, nil
	}
	err := s.rows.Err()
	s.closeLocked()
	if err != nil {
		return etl.Batch{}, fmt.Errorf("sqlite: source rows: %w", err)
	}
	s.done = true
	if len(batch) == 0 {
		// Nothing to deliver: the slot is complete as it is.
		if err := s.complete(ctx); err != nil {
			return etl.Batch{}, err
		}
		return etl.Batch{}, io.EOF
	}
	return etl.Batch{Records: batch, Ack: s.complete}, nil
}

func maxBatch(n int) int {
	if n <= 0 {
		return 500
	}
	return n
}

func (s *Source) start(ctx context.Context) error {
	s.lease, _ = runtime.LeaseFromContext(ctx)
	s.slotTime = sqlrec.SlotTime(s.lease, time.Now())
	args := make([]any, len(s.query.Params))
	for i, p := range s.query.Params {
		switch p {
		case sqlrec.ParamRunNumber:
			args[i] = s.lease.RunNumber
		case sqlrec.ParamFencingToken:
			args[i] = s.lease.FencingToken
		case sqlrec.ParamSlotTime:
			args[i] = timeText(s.slotTime)
		case sqlrec.ParamLastSlotTime:
			last, err := s.lastSlot(ctx)
			if err != nil {
				return err
			}
			args[i] = timeText(last)
		default: // :param_<name>, as ParseQuery admits no other
			v, err := sqlrec.RunParamValue(ctx, p)
			if err != nil {
				return fmt.Errorf("sqlite: source query: %w", err)
			}
			args[i] = v
		}
	}
	rows, err := s.db.QueryContext(ctx, s.query.SQL, args...)
	if err != nil {
		return fmt.Errorf("sqlite: source query: %w", err)
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return fmt.Errorf("sqlite: source columns: %w", err)
	}
	s.rows, s.cols, s.has = rows, cols, rows.Next()
	return nil
}

// timeText writes a slot time as SQLite's date functions write UTC times
// ("2006-01-02 15:04:05"), so it compares as text with CURRENT_TIMESTAMP
// columns and datetime() results; unixepoch(:slot_time) gives seconds.
func timeText(t time.Time) string { return t.UTC().Format(time.DateTime) }

func (s *Source) scan() (etl.Record, error) {
	vals := make([]any, len(s.cols))
	ptrs := make([]any, len(s.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := s.rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("sqlite: source scan: %w", err)
	}
	rec := make(etl.Record, len(s.cols))
	for i, c := range s.cols {
		rec[c] = vals[i]
	}
	return rec, nil
}

// lastSlot reads the pipeline's last completed slot, or the Unix epoch
// before the first.
func (s *Source) lastSlot(ctx context.Context) (time.Time, error) {
	if _, err := s.db.ExecContext(ctx, createState); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: create %s: %w", stateTable, err)
	}
	var us int64
	err := s.db.QueryRowContext(ctx, `SELECT last_slot_us FROM `+stateTable+` WHERE pipeline_id = ?1`, s.lease.PipelineID).Scan(&us)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return sqlrec.Epoch, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("sqlite: read %s: %w", stateTable, err)
	}
	return time.UnixMicro(us).UTC(), nil
}

// complete records the run's slot as the pipeline's last completed one,
// when the query reads :last_slot_time; it never moves backwards.
func (s *Source) complete(ctx context.Context) error {
	if !s.query.Uses(sqlrec.ParamLastSlotTime) {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO `+stateTable+` (pipeline_id, last_slot_us) VALUES (?1, ?2)
ON CONFLICT (pipeline_id) DO UPDATE SET last_slot_us = max(last_slot_us, excluded.last_slot_us)`,
		s.lease.PipelineID, s.slotTime.UnixMicro())
	if err != nil {
		return fmt.Errorf("sqlite: record completed slot: %w", err)
	}
	return nil
}

// Close ends the query if the run stopped before reading every row.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
	s.done = true
	return nil
}

func (s *Source) closeLocked() {
	if s.rows != nil {
		s.rows.Close()
		s.rows = nil
	}
	s.has = false
}
