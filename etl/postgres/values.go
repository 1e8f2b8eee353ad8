package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agora-etl/agora/etl/fencing"
)

// value converts a record field for pgx: json.Number becomes int64 or
// float64; everything else pgx encodes itself for the column's type
// (maps and slices as json or jsonb, time.Time as timestamptz, ...).
//
// For an integer column, a float64 must be a whole number: pgx would
// truncate 3.5 to 3.
func value(v any, integer bool) (any, error) {
	if f, ok := v.(float64); ok && integer {
		if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > 1<<63 {
			return nil, fmt.Errorf("%v is not an integer", f)
		}
		return int64(f), nil
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		whole := !strings.ContainsAny(string(n), ".eE")
		if integer && whole {
			return nil, fmt.Errorf("%s does not fit a 64-bit integer column", n)
		}
		if integer {
			return nil, fmt.Errorf("%s is not an integer", n)
		}
		if whole {
			// An integer beyond 64 bits, as its digits: a numeric or text
			// column keeps it exactly, where a float64 would round it.
			return string(n), nil
		}
		f, err := n.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %q: %w", n, err)
		}
		return f, nil
	}
	if i, ok := v.(int); ok {
		return int64(i), nil
	}
	return v, nil
}

// rowLevel reports whether a failed batch may be a few bad rows rather
// than a broken batch, so it is worth writing row by row: a data exception
// (class 22) or a constraint violation (class 23) from the server, or a
// value pgx could not encode for its column. Other server errors (an
// unknown column, a lock timeout), a fencing refusal and a cancelled run
// fail the batch.
func rowLevel(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, fencing.ErrStaleWriter) || errors.Is(err, fencing.ErrSlotDone) || errors.Is(err, fencing.ErrSlotForgotten) || errors.Is(err, fencing.ErrSlotBusy) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")
	}
	// Not from the server: an encoding error, found before anything was
	// sent; a broken connection shows up again at the row-by-row BEGIN.
	var connErr *pgconn.ConnectError
	return !errors.As(err, &connErr) && !pgconn.Timeout(err)
}

// columnType is the column type create_table gives a field, from its value.
func columnType(v any) string {
	switch v := v.(type) {
	case int, int32, int64:
		return "bigint"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "bigint"
		}
		return "double precision"
	case float64, float32:
		return "double precision"
	case bool:
		return "boolean"
	case time.Time:
		return "timestamptz"
	case []byte:
		return "bytea"
	case map[string]any, []any:
		return "jsonb"
	default:
		return "text"
	}
}

// copyEncodeFailed reports whether COPY stopped because pgx could not
// encode a value in COPY's binary format (it then aborts the COPY, which
// the server reports as query_canceled).
func copyEncodeFailed(ctx context.Context, err error) bool {
	var pgErr *pgconn.PgError
	return ctx.Err() == nil && errors.As(err, &pgErr) && pgErr.Code == "57014" && strings.Contains(pgErr.Message, "COPY from stdin failed")
}
