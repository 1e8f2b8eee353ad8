package transform

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agora-etl/agora/etl"
)

type dropFields []string

// Drop returns a transform that removes fields from every record.
func Drop(fields ...string) etl.Transform { return dropFields(slices.Clone(fields)) }

func (d dropFields) Name() string { return "drop(" + strings.Join(d, ", ") + ")" }

func (d dropFields) Apply(_ context.Context, r etl.Record) (etl.Record, bool, error) {
	for _, f := range d {
		delete(r, f)
	}
	return r, true, nil
}

type keepFields map[string]struct{}

// Keep returns a transform that removes every field but fields.
func Keep(fields ...string) etl.Transform {
	k := make(keepFields, len(fields))
	for _, f := range fields {
		k[f] = struct{}{}
	}
	return k
}

func (k keepFields) Name() string {
	return "keep(" + strings.Join(slices.Sorted(maps.Keys(k)), ", ") + ")"
}

func (k keepFields) Apply(_ context.Context, r etl.Record) (etl.Record, bool, error) {
	for f := range r {
		if _, ok := k[f]; !ok {
			delete(r, f)
		}
	}
	return r, true, nil
}

type renameFields struct{ from, to []string }

// Rename returns a transform that renames fields: each key of fields
// becomes its value; a field that is absent is left alone, and one that
// is renamed replaces any field already under the new name. Two fields
// renamed to one name are an error.
func Rename(fields map[string]string) (etl.Transform, error) {
	var rn renameFields
	seen := map[string]string{}
	var errs []error
	for _, from := range slices.Sorted(maps.Keys(fields)) {
		to := fields[from]
		switch {
		case strings.TrimSpace(to) == "":
			errs = append(errs, &etl.FieldError{Key: from, Err: errors.New("the new name is empty")})
		case seen[to] != "":
			errs = append(errs, &etl.FieldError{Key: from, Err: fmt.Errorf("%s is renamed to %q too", seen[to], to)})
		}
		seen[to] = from
		rn.from, rn.to = append(rn.from, from), append(rn.to, to)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return rn, nil
}

func (rn renameFields) Name() string {
	parts := make([]string, len(rn.from))
	for i := range rn.from {
		parts[i] = rn.from[i] + "→" + rn.to[i]
	}
	return "rename(" + strings.Join(parts, ", ") + ")"
}

func (rn renameFields) Apply(_ context.Context, r etl.Record) (etl.Record, bool, error) {
	// Read every old value first, so a → b, b → a swaps.
	var vals [8]any
	var has [8]bool
	v, h := vals[:0], has[:0]
	for _, from := range rn.from {
		val, ok := r[from]
		v, h = append(v, val), append(h, ok)
		delete(r, from)
	}
	for i, to := range rn.to {
		if h[i] {
			r[to] = v[i]
		}
	}
	return r, true, nil
}

// joinErrors is errors.Join, kept in one place so callers can range over
// the parts with Unwrap() []error.
func joinErrors(errs []error) error { return errors.Join(errs...) }
