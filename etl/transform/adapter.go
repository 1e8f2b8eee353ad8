package transform

import (
	"encoding/json"
	"strconv"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/agora-etl/agora/etl"
)

// adapter converts record values to CEL values: the default conversions,
// plus json.Number and etl.Record, inside maps and lists too. It is called
// on a field's value when an expression reads the field (the record itself
// is handed to CEL as a plain map, see activation), so a record's other
// fields are never converted.
type adapter struct{}

func (a adapter) NativeToValue(v any) ref.Val {
	switch v := v.(type) {
	// The values records hold most, first, as the default adapter
	// converts them.
	case string:
		return types.String(v)
	case json.Number:
		return number(string(v))
	case float64:
		return types.Double(v)
	case int64:
		return types.Int(v)
	case bool:
		return types.Bool(v)
	case nil:
		return types.NullValue
	case etl.Record:
		return types.NewStringInterfaceMap(a, v)
	case map[string]any:
		return types.NewStringInterfaceMap(a, v)
	case []any:
		return types.NewDynamicList(a, v)
	case int:
		return types.Int(v)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// number is a JSON number as CEL sees it: an int when it has no fraction
// or exponent and fits in an int64, a uint when it fits in a uint64 only
// (so every 64-bit integer a source writes comes out as it went in), else
// a double. A number with a fraction
// or an exponent goes straight to ParseFloat: ParseInt would only fail on
// it, and its error allocates.
func number(s string) ref.Val {
	if isInteger(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return types.Int(i)
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return types.Uint(u)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return types.NewErr("field value %q is not a number", s)
	}
	return types.Double(f)
}

// isInteger reports whether s has no fraction and no exponent: no '.',
// 'e' or 'E' (a loop: strings.ContainsAny costs more than the parse).
func isInteger(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}
