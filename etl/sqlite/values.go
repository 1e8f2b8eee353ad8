package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite"
)

// value converts a record field to what the driver stores: numbers as
// INTEGER or REAL, objects and arrays as JSON text, times as RFC 3339 text
// in UTC (which sorts and compares as text, and which SQLite's date
// functions read).
func value(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, []byte, bool, int64, float64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		if !strings.ContainsAny(string(x), ".eE") {
			// SQLite has no exact type for it: as a REAL (and a NUMERIC
			// column turns even its text into one) it would come back
			// another number.
			return nil, fmt.Errorf("number %s: an integer beyond 64 bits, which SQLite cannot store exactly; write it as a string", x)
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %q: %w", x, err)
		}
		return f, nil
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), nil
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	default:
		return x, nil
	}
}

// rowError reports whether err is about one row's values (a constraint it
// breaks, a value of the wrong type or size), so the row can go to the
// dead-letter queue while the rest of the batch is written.
func rowError(err error) bool {
	var e *sqlite3.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case 18, 19, 20: // SQLITE_TOOBIG, SQLITE_CONSTRAINT, SQLITE_MISMATCH
		return true
	}
	return false
}

// columnType is the column type create_table gives a field, from its value.
func columnType(v any) string {
	switch v.(type) {
	case int, int32, int64, float64, json.Number, bool:
		// NUMERIC keeps 1 as an integer and 1.5 as a real, as JSON does.
		return "NUMERIC"
	case []byte:
		return "BLOB"
	default:
		return "TEXT"
	}
}
