package transform

import (
	"errors"
	"fmt"
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/agora-etl/agora/etl"
)

// ErrMapKey is the error of a CEL map, in an expression's value, with a
// key that is not a string: a record's maps, as JSON objects, have string
// keys only, and turning 1 into "1" would change the value unseen. The
// record fails alone (dead-lettered); string(key) in the expression says
// what is meant.
var ErrMapKey = errors.New("transform: a map key is not a string")

// native converts an expression's value to a record value: null to nil,
// int to int64, uint to uint64, double to float64, string, bool, bytes to
// []byte, timestamp to time.Time, duration to time.Duration, lists to
// []any and maps to map[string]any, at any depth. A list or map read from
// the record and passed on whole is the record's own value, unchanged (its
// numbers stay as the source gave them). rec is the record the expression
// was evaluated over: the record itself, as a value, is copied, so setting
// a field to it makes no cycle.
func native(v ref.Val, rec map[string]any) (any, error) {
	switch v := v.(type) {
	case types.Null:
		return nil, nil
	case types.Int:
		return int64(v), nil
	case types.Uint:
		return uint64(v), nil
	case types.Double:
		return float64(v), nil
	case types.String:
		return string(v), nil
	case types.Bool:
		return bool(v), nil
	case types.Bytes:
		return []byte(v), nil
	case types.Timestamp:
		return v.Time, nil
	case types.Duration:
		return v.Duration, nil
	case traits.Mapper:
		if m, ok := recordMap(v.Value()); ok {
			return fromRecord(m, rec)
		}
		return nativeMap(v, rec)
	case traits.Lister:
		if l, ok := v.Value().([]any); ok {
			return fromRecord(l, rec)
		}
		return nativeList(v, rec)
	}
	return nil, fmt.Errorf("transform: a value of type %s has no record representation", v.Type().TypeName())
}

// recordMap returns v as a map[string]any when it is one (a record or a
// map read from one).
func recordMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case etl.Record:
		return m, true
	}
	return nil, false
}

func nativeMap(m traits.Mapper, rec map[string]any) (any, error) {
	out := make(map[string]any, int(m.Size().(types.Int)))
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		key, ok := k.(types.String)
		if !ok {
			return nil, fmt.Errorf("%w: %s key %v; use string(...) for a string key", ErrMapKey, k.Type().TypeName(), k.Value())
		}
		el, err := native(m.Get(k), rec)
		if err != nil {
			return nil, fmt.Errorf("[%q]: %w", string(key), err)
		}
		out[string(key)] = el
	}
	return out, nil
}

func nativeList(l traits.Lister, rec map[string]any) (any, error) {
	n := int(l.Size().(types.Int))
	out := make([]any, n)
	for i := range n {
		el, err := native(l.Get(types.Int(i)), rec)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = el
	}
	return out, nil
}

// fromRecord returns v, a value that came from the record (a list or map
// the adapter wrapped), as it is, but for the record itself, which is
// copied, and any CEL value inside, which is converted (in a copy of its
// list or map: the record's own values are never changed).
func fromRecord(v any, rec map[string]any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if sameMap(v, rec) {
			// Nested values are shared: transforms only ever change a
			// record's own fields.
			c := make(map[string]any, len(v))
			for k, el := range v {
				c[k] = el
			}
			return c, nil
		}
		var c map[string]any
		for k, el := range v {
			n, err := fromRecord(el, rec)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", k, err)
			}
			if !same(n, el) && c == nil {
				c = make(map[string]any, len(v))
				for k2, el2 := range v {
					c[k2] = el2
				}
			}
			if c != nil {
				c[k] = n
			}
		}
		if c != nil {
			return c, nil
		}
		return v, nil
	case etl.Record:
		n, err := fromRecord(map[string]any(v), rec)
		if m, ok := n.(map[string]any); ok && sameMap(m, v) {
			return v, nil
		}
		return n, err
	case []any:
		var c []any
		for i, el := range v {
			n, err := fromRecord(el, rec)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			if !same(n, el) && c == nil {
				c = append([]any(nil), v...)
			}
			if c != nil {
				c[i] = n
			}
		}
		if c != nil {
			return c, nil
		}
		return v, nil
	case ref.Val:
		return native(v, rec)
	}
	return v, nil
}

// sameMap reports whether a and b are one map.
func sameMap(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// same reports whether fromRecord gave back el itself: only lists, maps
// and CEL values are ever replaced, so only they are compared, by identity.
func same(n, el any) bool {
	switch e := el.(type) {
	case map[string]any:
		m, ok := n.(map[string]any)
		return ok && sameMap(m, e)
	case etl.Record:
		m, ok := n.(etl.Record)
		return ok && sameMap(m, e)
	case []any:
		l, ok := n.([]any)
		return ok && len(l) == len(e) && (len(e) == 0 || &l[0] == &e[0])
	case ref.Val:
		return false
	}
	return true
}
