package transform

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/agora-etl/agora/etl"
)

// activation binds `record` and nothing else, without the map the
// cel.Program.Eval(map) form would build per call. It hands the record to
// the interpreter as the plain map[string]any it is, which CEL's field
// selection reads directly (a Go map lookup), so a record is not wrapped
// per evaluation and only the fields an expression reads are converted,
// by adapter, when they are read.
type activation struct{ record map[string]any }

func (a *activation) ResolveName(name string) (any, bool) {
	if name == RecordVar {
		return a.record, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// eval evaluates prg over r, bound in act (which the caller reuses: a
// transform is applied from one goroutine at a time).
func eval(prg cel.Program, act *activation, r etl.Record) (ref.Val, error) {
	act.record = r
	out, _, err := prg.Eval(act)
	act.record = nil
	if err != nil {
		return nil, err
	}
	if types.IsError(out) {
		if e, ok := out.Value().(error); ok {
			return nil, e
		}
		return nil, errors.New(fmt.Sprint(out.Value()))
	}
	return out, nil
}

var (
	anyMap   = reflect.TypeFor[map[string]any]()
	anySlice = reflect.TypeFor[[]any]()
)

// native converts a CEL result to a record value: int64, uint64, float64,
// string, bool, []byte, time.Time, time.Duration, []any, map[string]any,
// or nil for null.
func native(v ref.Val) (any, error) {
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
		return time.Duration(v.Duration), nil
	case traits.Mapper:
		m, err := v.ConvertToNative(anyMap)
		if err != nil {
			return nil, err
		}
		return normalize(m), nil
	case traits.Lister:
		l, err := v.ConvertToNative(anySlice)
		if err != nil {
			return nil, err
		}
		return normalize(l), nil
	}
	return v.Value(), nil
}

// normalize turns CEL values left inside converted maps and lists into
// record values.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, el := range v {
			v[k] = normalize(el)
		}
		return v
	case []any:
		for i, el := range v {
			v[i] = normalize(el)
		}
		return v
	case ref.Val:
		n, err := native(v)
		if err != nil {
			return v.Value()
		}
		return n
	}
	return v
}
