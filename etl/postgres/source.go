package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sqlrec"
	"github.com/agora-etl/agora/runtime"
)

// SourceConfig configures the postgres source; the toml tags are its keys
// in an agora/v1 source table.
type SourceConfig struct {
	// URL is the connection string. It is never logged.
	URL string `toml:"url"`
	// Query is the SELECT whose rows are the run's records, one field per
	// column. It may use :run_number, :fencing_token, :slot_time,
	// :last_slot_time and :param_<name>, the run's parameter <name> as
	// text (see runtime.ParamsFromContext).
	Query string `toml:"query"`
}

// RunParams returns the run parameters the query reads (etl.ParamReader),
// so an agora/v1 file can check that its pipeline declares them.
func (c SourceConfig) RunParams() []etl.ParamUse {
	q, err := sqlrec.ParseQuery(c.Query, sqlrec.DollarPlaceholder)
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
	if strings.TrimSpace(c.URL) == "" {
		errs = append(errs, etl.FieldErrorf("url", "is required"))
	}
	if strings.TrimSpace(c.Query) == "" {
		errs = append(errs, etl.FieldErrorf("query", "is required"))
	} else if _, err := sqlrec.ParseQuery(c.Query, sqlrec.DollarPlaceholder); err != nil {
		errs = append(errs, &etl.FieldError{Key: "query", Err: err})
	}
	return errors.Join(errs...)
}

// stateTable remembers, per pipeline, the last slot whose records every
// sink accepted: what :last_slot_time reads.
const stateTable = "agora_source_state"

const createState = `CREATE TABLE IF NOT EXISTS ` + stateTable + ` (pipeline_id text PRIMARY KEY, last_slot_time timestamptz NOT NULL)`

// Source streams the rows of one query in batches: pgx reads rows off the
// connection as the source hands them on, never the whole result at once.
// A Source serves one run; build a new one per run.
type Source struct {
	pool  *pgxpool.Pool
	query sqlrec.Query

	mu       sync.Mutex
	rows     pgx.Rows
	fields   []string
	has      bool // rows holds a row not yet returned
	done     bool
	lease    runtime.Lease
	slotTime time.Time
}

// NewSource returns a source reading cfg.Query through pool. cfg.URL is
// not used.
func NewSource(pool *pgxpool.Pool, cfg SourceConfig) (*Source, error) {
	if pool == nil {
		return nil, errors.New("postgres: NewSource: nil pool")
	}
	q, err := sqlrec.ParseQuery(cfg.Query, sqlrec.DollarPlaceholder)
	if err != nil {
		return nil, fmt.Errorf("postgres: source query: %w", err)
	}
	return &Source{pool: pool, query: q}, nil
}

// Read returns the next batch of at most max rows, and io.EOF after the
// last. The last batch's Ack records the run's slot as the pipeline's last
// completed one, which the next run's :last_slot_time reads.
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
	if max <= 0 {
		max = 500
	}
	batch := make([]etl.Record, 0, min(max, 1024))
	for s.has && len(batch) < max {
		vals, err := s.rows.Values()
		if err != nil {
			s.closeLocked()
			return etl.Batch{}, fmt.Errorf("postgres: source row: %w", err)
		}
		rec := make(etl.Record, len(s.fields))
		for i, f := range s.fields {
			rec[f] = recordValue(vals[i])
		}
		batch = append(batch, rec)
		s.has = s.rows.Next()
	}
	if s.has {
		return etl.Batch{Records: batch}, nil
	}
	s.rows.Close()
	err := s.rows.Err()
	s.closeLocked()
	if err != nil {
		return etl.Batch{}, fmt.Errorf("postgres: source rows: %w", err)
	}
	s.done = true
	if len(batch) == 0 {
		if err := s.complete(ctx); err != nil {
			return etl.Batch{}, err
		}
		return etl.Batch{}, io.EOF
	}
	return etl.Batch{Records: batch, Ack: s.complete}, nil
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
			args[i] = s.slotTime
		case sqlrec.ParamLastSlotTime:
			last, err := s.lastSlot(ctx)
			if err != nil {
				return err
			}
			args[i] = last
		default: // :param_<name>, as ParseQuery admits no other
			v, err := sqlrec.RunParamValue(ctx, p)
			if err != nil {
				return fmt.Errorf("postgres: source query: %w", err)
			}
			args[i] = v
		}
	}
	rows, err := s.pool.Query(ctx, s.query.SQL, args...)
	if err != nil {
		return fmt.Errorf("postgres: source query: %w", err)
	}
	s.rows = rows
	for _, fd := range rows.FieldDescriptions() {
		s.fields = append(s.fields, fd.Name)
	}
	s.has = rows.Next()
	if !s.has && rows.Err() != nil {
		err := rows.Err()
		return fmt.Errorf("postgres: source query: %w", err)
	}
	return nil
}

// recordValue turns what pgx scans into what records carry: numerics as
// int64 when whole and float64 otherwise, UUIDs as their text.
func recordValue(v any) any {
	switch x := v.(type) {
	case pgtype.Numeric:
		if !x.Valid {
			return nil
		}
		if i, err := x.Int64Value(); err == nil && i.Valid && x.Exp >= 0 {
			return i.Int64
		}
		f, err := x.Float64Value()
		if err != nil {
			return nil
		}
		return f.Float64
	case [16]byte:
		return uuid.UUID(x).String()
	}
	return v
}

// lastSlot reads the pipeline's last completed slot, or the Unix epoch
// before the first.
func (s *Source) lastSlot(ctx context.Context) (time.Time, error) {
	if err := createIfMissing(func() error { _, err := s.pool.Exec(ctx, createState); return err }); err != nil {
		return time.Time{}, fmt.Errorf("postgres: create %s: %w", stateTable, err)
	}
	var t time.Time
	err := s.pool.QueryRow(ctx, `SELECT last_slot_time FROM `+stateTable+` WHERE pipeline_id = $1`, s.lease.PipelineID).Scan(&t)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return sqlrec.Epoch, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("postgres: read %s: %w", stateTable, err)
	}
	return t.UTC(), nil
}

// complete records the run's slot as the pipeline's last completed one,
// when the query reads :last_slot_time; it never moves backwards.
func (s *Source) complete(ctx context.Context) error {
	if !s.query.Uses(sqlrec.ParamLastSlotTime) {
		return nil
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO `+stateTable+` (pipeline_id, last_slot_time) VALUES ($1, $2)
ON CONFLICT (pipeline_id) DO UPDATE SET last_slot_time = greatest(`+stateTable+`.last_slot_time, EXCLUDED.last_slot_time)`,
		s.lease.PipelineID, s.slotTime)
	if err != nil {
		return fmt.Errorf("postgres: record completed slot: %w", err)
	}
	return nil
}

// Close ends the query if the run stopped before reading every row, and
// gives its connection back to the pool.
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
