package runtime

import "reflect"

// isNilPipeline reports whether p is nil or a typed nil pointer, map, func,
// chan or slice hiding in a non-nil interface.
func isNilPipeline(p Pipeline) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}
