package transform

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/traits"

	"github.com/agora-etl/agora/etl"
)

// filter keeps the records its expression holds for.
type filter struct {
	expr string
	prg  *program
	act  reusable[activation]
}

// Filter returns a transform that keeps the records for which expr, a CEL
// expression giving a bool, is true, and leaves the others out. A record
// on which it cannot be evaluated (a missing field, a type mismatch) is
// dead-lettered, and so is one whose evaluation goes over the max_cost
// (WithMaxCost, DefaultMaxCost). An evaluation with a comprehension stops
// when the context Apply is given ends, with an error wrapping its cause.
// A compile error is a *CompileError (one wrapping a *CostError when the
// expression's cost is over the max_cost whatever the record).
func Filter(expr string, opts ...Option) (etl.Transform, error) {
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	prg, err := compile(expr, cel.BoolType, o.maxCost)
	if err != nil {
		return nil, err
	}
	return &filter{expr: expr, prg: prg}, nil
}

// Name describes the transform in dead letters.
func (f *filter) Name() string { return "filter(" + f.expr + ")" }

func (f *filter) Apply(ctx context.Context, r etl.Record) (etl.Record, bool, error) {
	act := f.act.take()
	v, err := eval(ctx, f.prg, act, r)
	f.act.give(act)
	if err != nil {
		return nil, false, fmt.Errorf("filter %q: %w", f.expr, err)
	}
	b, ok := v.(types.Bool)
	if !ok {
		return nil, false, fmt.Errorf("filter %q: gave %s, want a bool", f.expr, v.Type())
	}
	return r, bool(b), nil
}

// mapper sets fields to its expressions' values.
type mapper struct {
	names []string
	exprs []string
	prgs  []*program
	// all, when there are two fields or more, evaluates every expression
	// in one program, a list of their values: one CEL evaluation per
	// record instead of one per field, and one cost limit for them all.
	// When it fails on a record (but for its cost or the context), the
	// fields are evaluated one by one to say which failed.
	all  *program
	work reusable[mapWork]
}

// mapWork is what one application of a Map needs besides the record.
type mapWork struct {
	act  activation
	vals []any
}

// Map returns a transform that sets each field of fields to the value of
// its CEL expression. Every expression sees the record as it came in (one
// field's new value is not visible to another's expression); once all have
// been evaluated the fields are set, and a field whose value is null is
// removed (null inside a list or map stays null). A record on which any
// expression fails, or whose evaluation goes over the max_cost (all the
// expressions together: WithMaxCost, DefaultMaxCost), is dead-lettered
// unchanged. Compile errors are *FieldCompileError values wrapping
// *CompileError values, one per expression, in field name order, joined;
// or a *CostError when the expressions are within the max_cost one by
// one but not together.
func Map(fields map[string]string, opts ...Option) (etl.Transform, error) {
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	m := &mapper{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		prg, err := compile(fields[name], nil, o.maxCost)
		if err != nil {
			errs = append(errs, &FieldCompileError{Field: name, Err: err})
			continue
		}
		m.names = append(m.names, name)
		m.exprs = append(m.exprs, fields[name])
		m.prgs = append(m.prgs, prg)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	if len(m.exprs) > 1 {
		// Each expression compiled alone, so each is whole; the line
		// breaks end any comment one ends with.
		e, ast, err := check("[\n"+strings.Join(m.exprs, "\n,\n")+"\n]", nil)
		if err == nil {
			all, cerr, err := plan(e, ast, o.maxCost)
			if cerr != nil {
				cerr.Fields = m.names
				return nil, cerr
			}
			if err == nil {
				m.all = all
			}
		}
	}
	return m, nil
}

// Name describes the transform in dead letters.
func (m *mapper) Name() string { return fmt.Sprintf("map(%v)", m.names) }

func (m *mapper) Apply(ctx context.Context, r etl.Record) (etl.Record, bool, error) {
	w := m.work.take()
	defer m.work.give(w)
	if len(w.vals) < len(m.prgs) {
		w.vals = make([]any, len(m.prgs))
	}
	vals := w.vals[:len(m.prgs)]
	done, err := m.evalAll(ctx, &w.act, r, vals)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", m.Name(), err)
	}
	if !done {
		for i, prg := range m.prgs {
			v, err := eval(ctx, prg, &w.act, r)
			if err == nil {
				vals[i], err = native(v, r)
			}
			if err != nil {
				clear(vals)
				return nil, false, fmt.Errorf("map %s = %q: %w", m.names[i], m.exprs[i], err)
			}
		}
	}
	if r == nil {
		r = etl.Record{}
	}
	for i, name := range m.names {
		if vals[i] == nil {
			delete(r, name)
		} else {
			r[name] = vals[i]
		}
		vals[i] = nil
	}
	return r, true, nil
}

// evalAll sets vals to the values of every expression, evaluated in one
// program, and reports whether it could. An error is one evaluating the
// fields one by one would not place: the cost over the limit, which is
// the fields' together, or the context's end.
func (m *mapper) evalAll(ctx context.Context, act *activation, r etl.Record, vals []any) (bool, error) {
	if m.all == nil {
		return false, nil
	}
	v, err := eval(ctx, m.all, act, r)
	if err != nil {
		if errors.Is(err, ErrMaxCost) || ctx.Err() != nil {
			return false, err
		}
		return false, nil
	}
	l, ok := v.(traits.Lister)
	if !ok || l.Size() != types.Int(len(vals)) {
		return false, nil
	}
	for i := range vals {
		if vals[i], err = native(l.Get(types.Int(i)), r); err != nil {
			clear(vals)
			return false, nil
		}
	}
	return true, nil
}

// FieldCompileError is the compile error of one field's expression of a
// Map.
type FieldCompileError struct {
	// Field is the field the expression sets.
	Field string
	// Err is the *CompileError.
	Err error
}

func (e *FieldCompileError) Error() string { return "field " + e.Field + ": " + e.Err.Error() }

// Unwrap returns the *CompileError.
func (e *FieldCompileError) Unwrap() error { return e.Err }
