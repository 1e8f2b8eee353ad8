package config

import (
	"encoding"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// field is one key a configuration struct accepts.
type field struct {
	name string
	typ  reflect.Type
}

// structFields lists the keys of struct type t as go-toml names them: the
// `toml` tag's name, else the field name; embedded structs without a tag
// contribute their own fields; "-" and unexported fields are not keys.
func structFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	out := listFields(t)
	fieldCache.Store(t, out)
	return out
}

// fieldCache holds structFields' answers by type: a file names the same
// few component types in every pipeline. The slices are not changed.
var fieldCache sync.Map

func listFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, structFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name: name, typ: f.Type})
	}
	return out
}

// durationString is what a text-decoded duration type wants.
const durationString = `a duration string such as "5s"`

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// wants says what TOML value a Go type takes, as "a string", "an integer",
// ...; "" means any value (an interface).
func wants(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		return "a date-time"
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		// A duration type that decodes from text would take an integer
		// as nanoseconds: say what to write instead.
		if t.Kind() == reflect.Int64 && strings.HasSuffix(t.Name(), "Duration") {
			return durationString
		}
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "a table"
	default:
		return ""
	}
}

// accepts reports whether a decoded TOML value suits a Go type as wanted.
func accepts(want string, v any) bool {
	got := tomlType(v)
	switch want {
	case "":
		return true
	case "a number":
		return got == "an integer" || got == "a float"
	case "a date-time":
		return got == "a date-time" || got == "a local date-time" || got == "a local date"
	case "a string", durationString:
		return got == "a string"
	default:
		return got == want
	}
}

// checkStruct checks table m (at p) against struct type t: unknown keys
// with a did-you-mean, values of the wrong type, and the same inside
// nested tables and arrays of tables. Keys it reports are dropped from m,
// so the decoder that follows meets only good ones. extra are keys the
// caller handles (such as type). It reports whether every key was good.
func (d *decoder) checkStruct(m map[string]any, p path, t reflect.Type, extra []string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fields := structFields(t)
	names := slices.Clone(extra)
	for _, f := range fields {
		names = append(names, f.name)
	}
	good := true
	for _, k := range slices.Sorted(maps.Keys(m)) {
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == k })
		if i < 0 {
			d.unknownKey(p, k, names)
			delete(m, k)
			good = false
			continue
		}
		if !d.checkValue(m[k], p.child(k), fields[i].typ) {
			delete(m, k)
			good = false
		}
	}
	return good
}

// checkValue checks one value against a Go type, going into tables that
// decode into structs and arrays whose elements do.
func (d *decoder) checkValue(v any, p path, t reflect.Type) bool {
	want := wants(t)
	if !accepts(want, v) {
		d.wrongType(p, want, v)
		return false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && want == "a table":
		return d.checkStruct(v.(map[string]any), p, t, nil)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		elems, _ := v.([]any)
		good := true
		for i, el := range elems {
			if !d.checkValue(el, p.index(i), t.Elem()) {
				good = false
			}
		}
		return good
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		good := true
		for k, el := range v.(map[string]any) {
			if !d.checkValue(el, p.child(k), t.Elem()) {
				good = false
			}
		}
		return good
	}
	return true
}
