// Package isnil tells a nil value from a typed nil hiding in a non-nil
// interface, for the checks of what user code hands agora (a pipeline a
// factory returned, a tracer provider, a component a constructor built).
package isnil

import "reflect"

// Value reports whether v is nil or a nil pointer, map, func, chan, slice or
// interface held by a non-nil interface: a (*T)(nil) returned as a Pipeline
// compares unequal to nil but cannot be called.
func Value(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
