package sqlrec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agora-etl/agora/etl"
)

// The values of a sink's on_unknown_field: what happens to a record with
// a field that is not a column of the table.
const (
	// UnknownReject sends the record to the dead-letter queue, with an
	// error naming the field and the table; the batch's other records are
	// written in the same transaction. It is the default.
	UnknownReject = "reject"
	// UnknownIgnore drops the field and writes the record's other fields.
	UnknownIgnore = "ignore"
)

// checkUnknown reports a bad on_unknown_field value.
func checkUnknown(v string) error {
	switch v {
	case "", UnknownReject, UnknownIgnore:
		return nil
	}
	return etl.FieldErrorf("on_unknown_field", "must be %q or %q, not %q", UnknownReject, UnknownIgnore, v)
}

// Fit is a batch sorted against the table's columns.
type Fit struct {
	// Cols are the columns to write.
	Cols []string
	// Keep lists the indexes of the records to write, in batch order; nil
	// means every record.
	Keep []int
	// Rejections are the records refused for their fields, by index.
	Rejections []etl.Rejection
	// Unknown counts the records with a field that is not a column,
	// rejected or (UnknownIgnore) written without it.
	Unknown int
}

// FitColumns picks the columns to write a batch to and the records that
// fit the table. configured is the sink's columns setting: when set it is
// the column list, fields outside it are not written, and the table's
// columns are not consulted (a configured column the table lacks fails
// the batch at the database). Otherwise the columns are the fields of the
// records that are columns of the table, known(field) saying which (nil:
// the table's columns are not known, as before it exists, and every field
// is a column). A record with a field the table lacks is rejected, with
// an error wrapping etl.ErrUnknownField naming the fields and table, when
// onUnknown is UnknownReject (or ""); with UnknownIgnore the fields are
// left out, and only a record none of whose fields is a column is
// rejected.
func FitColumns(table string, configured []string, records []etl.Record, known func(string) bool, onUnknown string) Fit {
	if len(configured) > 0 || known == nil {
		return Fit{Cols: Columns(configured, records)}
	}
	var f Fit
	keep := make([]int, 0, len(records))
	seen := map[string]struct{}{}
	var unknown, added []string
	for i, r := range records {
		// One pass over the fields: the columns first seen in this record
		// are taken back out if the record is rejected.
		unknown, added = unknown[:0], added[:0]
		for k := range r {
			if _, ok := seen[k]; ok {
				continue // a column already: no second lookup
			}
			if !known(k) {
				unknown = append(unknown, k)
				continue
			}
			seen[k] = struct{}{}
			added = append(added, k)
		}
		if len(unknown) == 0 {
			keep = append(keep, i)
			continue
		}
		f.Unknown++
		if onUnknown == UnknownIgnore && len(unknown) < len(r) {
			keep = append(keep, i)
			continue
		}
		for _, k := range added {
			delete(seen, k)
		}
		f.Rejections = append(f.Rejections, etl.Rejection{Index: i, Err: unknownError(table, unknown, onUnknown)})
	}
	if len(f.Rejections) > 0 {
		f.Keep = keep
	}
	f.Cols = make([]string, 0, len(seen))
	for k := range seen {
		f.Cols = append(f.Cols, k)
	}
	sort.Strings(f.Cols)
	return f
}

func unknownError(table string, fields []string, onUnknown string) error {
	sort.Strings(fields)
	q := make([]string, len(fields))
	for i, f := range fields {
		q[i] = fmt.Sprintf("%q", f)
	}
	if onUnknown == UnknownIgnore {
		return fmt.Errorf("table %s has none of the record's fields (%s) as a column: %w", table, strings.Join(q, ", "), etl.ErrUnknownField)
	}
	what := "no column named " + q[0]
	if len(q) > 1 {
		what = "no columns named " + strings.Join(q, ", ")
	}
	return fmt.Errorf("table %s has %s (on_unknown_field = %q; %q drops such fields): %w", table, what, UnknownReject, UnknownIgnore, etl.ErrUnknownField)
}

// Len is the number of records to write.
func (f Fit) Len(batch int) int {
	if f.Keep != nil {
		return len(f.Keep)
	}
	return batch
}

// MergeRejections returns a and b, both sorted by index, as one list
// sorted by index.
func MergeRejections(a, b []etl.Rejection) []etl.Rejection {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]etl.Rejection, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}
