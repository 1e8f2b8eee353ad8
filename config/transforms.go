package config

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/transform"
	"github.com/agora-etl/agora/internal/errsplit"
)

// Transform types a [[pipelines.<id>.transforms]] table may name.
var transformTypes = []string{"filter", "map", "drop", "keep", "rename"}

// transforms checks the transforms tables and builds them: their
// expressions compile here, so `agora check` reports them, and so are the
// run parameters they read checked against declared, the pipeline's.
func (d *decoder) transforms(m map[string]any, at path, declared map[string]string) []etl.Transform {
	tables, ok := d.tables(m, at, "transforms")
	if !ok {
		return nil
	}
	var out []etl.Transform
	for i, t := range tables {
		p := at.child("transforms").index(i)
		if tr := d.transform(t, p); tr != nil {
			d.checkParamsRead(tr, p, at, declared)
			out = append(out, tr)
		}
	}
	return out
}

func (d *decoder) transform(m map[string]any, at path) etl.Transform {
	typ, ok := d.str(m, at, "type")
	if _, has := m["type"]; !has {
		d.atKey(at, "%s: type is missing: add type = \"filter\", \"map\", \"drop\", \"keep\" or \"rename\"", at)
		return nil
	}
	if !ok {
		return nil
	}
	switch typ {
	case "filter":
		d.knownKeys(m, at, []string{"type", "expr", "max_cost"})
		opts, okCost := d.maxCost(m, at)
		expr, ok := d.str(m, at, "expr")
		if _, has := m["expr"]; !has {
			d.atKey(at, "%s: a filter needs expr, a CEL expression over record such as expr = \"record.amount > 0\"", at)
			return nil
		}
		if !ok || !okCost {
			return nil
		}
		tr, err := transform.Filter(expr, opts...)
		if err != nil {
			d.compileError(at.child("expr"), err)
			return nil
		}
		return tr
	case "map", "rename":
		keys := []string{"type", "fields"}
		if typ == "map" {
			keys = append(keys, "max_cost")
		}
		d.knownKeys(m, at, keys)
		opts, okCost := d.maxCost(m, at)
		fields, ok := d.stringTable(m, at, "fields", typ)
		if !ok || !okCost {
			return nil
		}
		if typ == "rename" {
			tr, err := transform.Rename(fields)
			if err != nil {
				for _, e := range errsplit.Split(err) {
					var fe *etl.FieldError
					if errors.As(e, &fe) {
						d.atValue(at.child("fields").child(fe.Key), "%s: %v", at.child("fields").child(fe.Key), fe.Err)
					}
				}
				return nil
			}
			return tr
		}
		tr, err := transform.Map(fields, opts...)
		if err != nil {
			for _, e := range errsplit.Split(err) {
				var fe *transform.FieldCompileError
				var ce *transform.CostError
				switch {
				case errors.As(e, &fe):
					d.compileError(at.child("fields").child(fe.Field), fe.Err)
				case errors.As(e, &ce):
					// Every field is within the limit alone: the
					// problem is the table's.
					d.atValue(at.child("fields"), "%s: %s", at.child("fields"), strings.TrimPrefix(ce.Error(), "transform: "))
				}
			}
			return nil
		}
		return tr
	case "drop", "keep":
		d.knownKeys(m, at, []string{"type", "fields"})
		v, has := m["fields"]
		if !has {
			d.atKey(at, "%s: %s needs fields = [\"...\"], the field names", at, typ)
			return nil
		}
		list, ok := v.([]any)
		names := make([]string, 0, len(list))
		for j, el := range list {
			s, isStr := el.(string)
			if !isStr {
				d.wrongType(at.child("fields").index(j), "a string", el)
				ok = false
			}
			names = append(names, s)
		}
		if !ok {
			if _, isList := v.([]any); !isList {
				d.wrongType(at.child("fields"), "an array of strings", v)
			}
			return nil
		}
		if typ == "drop" {
			return transform.Drop(names...)
		}
		return transform.Keep(names...)
	default:
		d.atValue(at.child("type"), "%s: unknown transform type %s%s", at.child("type"), d.quoted(at.child("type"), typ), hint(typ, transformTypes, "transform types"))
		return nil
	}
}

// maxCost reads a filter's or map's max_cost, the most one evaluation
// may cost (transform.WithMaxCost); without it, transform.DefaultMaxCost.
func (d *decoder) maxCost(m map[string]any, at path) ([]transform.Option, bool) {
	if _, has := m["max_cost"]; !has {
		return nil, true
	}
	n, ok := d.integer(m, at, "max_cost", 1, math.MaxInt64)
	if !ok {
		return nil, false
	}
	return []transform.Option{transform.WithMaxCost(uint64(n))}, true
}

// stringTable returns m[key] as a table of strings.
func (d *decoder) stringTable(m map[string]any, at path, key, typ string) (map[string]string, bool) {
	t, ok := d.table(m, at, key)
	if _, has := m[key]; !has {
		d.atKey(at, "%s: %s needs %s = { name = \"...\" }", at, typ, key)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(t))
	good := true
	for _, k := range slices.Sorted(maps.Keys(t)) {
		s, isStr := t[k].(string)
		if !isStr {
			d.wrongType(at.child(key).child(k), "a string", t[k])
			good = false
		}
		out[k] = s
	}
	return out, good
}

// compileError places a CEL compile error inside the TOML string that
// holds the expression: the string's position plus the error's offset.
func (d *decoder) compileError(p path, err error) {
	var ce *transform.CompileError
	if !errors.As(err, &ce) {
		d.atValue(p, "%s: %v", p, err)
		return
	}
	pos := d.ix.valuePos(p)
	if s, ok := d.ix.lookup(p); ok && s.end > s.off {
		raw := d.ix.data[s.off:s.end]
		start := 1
		if len(raw) >= 6 && (string(raw[:3]) == `"""` || string(raw[:3]) == "'''") {
			start = 3
			if start < len(raw) && raw[start] == '\n' {
				start++
			} else if start+1 < len(raw) && raw[start] == '\r' && raw[start+1] == '\n' {
				start += 2
			}
		}
		// Characters of the expression to bytes of the file; escapes
		// in basic strings are rare in expressions and not mapped.
		off, n := s.off+start, ce.Offset()
		for _, r := range string(d.ix.data[off:s.end]) {
			if n == 0 {
				break
			}
			off += len(string(r))
			n--
		}
		pos = d.ix.pos(off)
	}
	d.addAt(pos, "%s: %s", p, ce.Message)
}
