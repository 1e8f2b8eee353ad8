package sqlrec

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agora-etl/agora/etl"
)

// The write modes of a sink.
const (
	ModeInsert = "insert"
	ModeUpsert = "upsert"
	// ModeReplace inserts, writing the run's slot into SlotColumn, and the
	// slot run's first write of its slot deletes the rows an earlier run
	// of the slot left.
	ModeReplace = "replace"
)

// Table is a sink's table settings, the keys both database sinks share.
type Table struct {
	Name     string
	Columns  []string
	Mode     string
	Key      []string
	Resource string
	// OnUnknownField is UnknownReject (or "") or UnknownIgnore.
	OnUnknownField string
	// SlotColumn is the column replace mode writes the run's slot time to.
	SlotColumn string
}

// Check reports every problem with the settings as *etl.FieldError values
// joined together; urlKey names the key that locates the database ("url"
// or "path") and url is its value.
func (t Table) Check(urlKey, url string) error {
	var errs []error
	if strings.TrimSpace(url) == "" {
		errs = append(errs, etl.FieldErrorf(urlKey, "is required"))
	}
	if strings.TrimSpace(t.Name) == "" {
		errs = append(errs, etl.FieldErrorf("table", "is required"))
	}
	for i, c := range t.Columns {
		if strings.TrimSpace(c) == "" {
			errs = append(errs, etl.FieldErrorf("columns", "entry %d is empty", i))
		} else if slices.Contains(t.Columns[:i], c) {
			errs = append(errs, etl.FieldErrorf("columns", "%q is listed twice", c))
		}
	}
	switch t.Mode {
	case "", ModeInsert, ModeReplace:
		if len(t.Key) > 0 {
			errs = append(errs, etl.FieldErrorf("key", "is only used with mode = %q", ModeUpsert))
		}
	case ModeUpsert:
		if len(t.Key) == 0 {
			errs = append(errs, etl.FieldErrorf("key", "is required with mode = %q: the columns of the table's primary key or a unique index", ModeUpsert))
		}
		for i, k := range t.Key {
			switch {
			case strings.TrimSpace(k) == "":
				errs = append(errs, etl.FieldErrorf("key", "entry %d is empty", i))
			case slices.Contains(t.Key[:i], k):
				errs = append(errs, etl.FieldErrorf("key", "%q is listed twice", k))
			case len(t.Columns) > 0 && !slices.Contains(t.Columns, k):
				errs = append(errs, etl.FieldErrorf("key", "%q is not among columns %v", k, t.Columns))
			}
		}
	default:
		errs = append(errs, etl.FieldErrorf("mode", "must be %q, %q or %q, not %q", ModeInsert, ModeUpsert, ModeReplace, t.Mode))
	}
	switch {
	case t.Mode == ModeReplace && strings.TrimSpace(t.SlotColumn) == "":
		errs = append(errs, etl.FieldErrorf("slot_column", "is required with mode = %q: the column the sink writes each row's slot time to, by which a re-run of the slot deletes the rows it replaces", ModeReplace))
	case t.Mode == ModeReplace && slices.ContainsFunc(t.Columns, func(c string) bool { return strings.EqualFold(c, t.SlotColumn) }):
		errs = append(errs, etl.FieldErrorf("slot_column", "%q is also listed in columns: the sink writes the run's slot time there itself, so no record field may go to it", t.SlotColumn))
	case t.Mode != ModeReplace && t.SlotColumn != "":
		errs = append(errs, etl.FieldErrorf("slot_column", "is only used with mode = %q", ModeReplace))
	}
	if err := checkUnknown(t.OnUnknownField); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ResourceName is the fenced resource: Resource, or the table name.
func (t Table) ResourceName() string {
	if t.Resource != "" {
		return t.Resource
	}
	return t.Name
}

// Upsert reports whether the mode is upsert.
func (t Table) Upsert() bool { return t.Mode == ModeUpsert }

// Replace reports whether the mode is replace.
func (t Table) Replace() bool { return t.Mode == ModeReplace }

// ReplacesSlots reports whether a re-run of a slot leaves the table as if
// the slot had run once: upsert (when the re-run writes the same keys) and
// replace do; insert adds the re-run's rows to the earlier run's.
func (t Table) ReplacesSlots() bool { return t.Upsert() || t.Replace() }

// QuoteIdent quotes an identifier for PostgreSQL and SQLite; a dotted name
// (schema.table) is quoted part by part.
func QuoteIdent(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
	}
	return strings.Join(parts, ".")
}

// QuoteList quotes each name and joins them with commas.
func QuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// Columns returns the columns to write records to: configured when set,
// otherwise every field any record has, sorted. With upsert, key columns
// come first when derived, so a missing key reads as a plain error.
func Columns(configured []string, records []etl.Record) []string {
	if len(configured) > 0 {
		return configured
	}
	seen := map[string]struct{}{}
	for _, r := range records {
		for k := range r {
			seen[k] = struct{}{}
		}
	}
	cols := make([]string, 0, len(seen))
	for k := range seen {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	return cols
}

// KeyOf returns a string identifying a record's key values, to spot
// records of one batch with the same key.
func KeyOf(r etl.Record, key []string) string {
	var b strings.Builder
	for _, k := range key {
		fmt.Fprintf(&b, "%v\x00", r[k])
	}
	return b.String()
}

// LastPerKey returns the indexes of records to write for an upsert: for
// records sharing a key, only the last one, which is what writing them one
// after another would leave. The order of the others is kept.
func LastPerKey(records []etl.Record, key []string) []int {
	return LastPerKeyIn(records, nil, key)
}

// LastPerKeyIn is LastPerKey over the records at idx (nil: all of them):
// it returns the indexes to write, or idx itself when no key repeats.
func LastPerKeyIn(records []etl.Record, idx []int, key []string) []int {
	n := len(records)
	if idx != nil {
		n = len(idx)
	}
	at := func(k int) int {
		if idx != nil {
			return idx[k]
		}
		return k
	}
	last := make(map[string]int, n)
	for k := range n {
		last[KeyOf(records[at(k)], key)] = at(k)
	}
	if len(last) == n {
		return idx
	}
	keep := make([]int, 0, len(last))
	for k := range n {
		if i := at(k); last[KeyOf(records[i], key)] == i {
			keep = append(keep, i)
		}
	}
	return keep
}

// Describe is the table settings for a summary: table, mode (insert when
// not set) and, when set, key and slot_column, as "key=value" pairs.
func (t Table) Describe() []string {
	mode := t.Mode
	if mode == "" {
		mode = ModeInsert
	}
	out := []string{"table=" + t.Name, "mode=" + mode}
	if len(t.Key) > 0 {
		out = append(out, "key="+strings.Join(t.Key, ","))
	}
	if t.SlotColumn != "" {
		out = append(out, "slot_column="+t.SlotColumn)
	}
	return out
}
