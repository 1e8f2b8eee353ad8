package transform

import (
	"encoding/json"
	"strconv"
	"strings"

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
// a double. A number CEL cannot hold as written (an integer past 64 bits,
// a decimal with more digits than a double keeps, a magnitude past a
// double's range) is an error rather than a rounded value: an expression
// that reads it fails the record, which goes to the dead-letter queue
// whole, instead of writing a number the source never sent. A number with
// a fraction or an exponent goes straight to ParseFloat: ParseInt would
// only fail on it, and its error allocates.
func number(s string) ref.Val {
	if isInteger(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return types.Int(i)
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return types.Uint(u)
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return types.NewErr("field value %s does not fit a 64-bit integer: CEL would round it (a field the expression does not read, or a list or map passed on whole, keeps it as written)", s)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return types.NewErr("field value %s is beyond a double's range: CEL cannot hold it (a field the expression does not read, or a list or map passed on whole, keeps it as written)", s)
		}
		return types.NewErr("field value %q is not a number", s)
	}
	if (f == 0 || len(s) > 15 && significant(s) > 15) && !sameDecimal(s, strconv.FormatFloat(f, 'e', -1, 64)) {
		return types.NewErr("field value %s has more digits than a double holds: CEL would round it to %s (a field the expression does not read, or a list or map passed on whole, keeps it as written)", s, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return types.Double(f)
}

// significant counts the digits of s's mantissa, leading zeros left out
// and trailing zeros included: an upper bound that is cheap to take, so
// the exact comparison runs only for numbers long enough to need it (every
// decimal of 15 significant digits or fewer survives a double).
func significant(s string) int {
	n, leading := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c < '0' || c > '9' || (leading && c == '0') {
			continue
		}
		leading = false
		n++
	}
	return n
}

// sameDecimal reports whether two decimal numbers are the same value:
// their mantissa digits, without leading and trailing zeros, and the
// exponent of their first digit are equal.
func sameDecimal(a, b string) bool {
	ad, ae := decimal(a)
	bd, be := decimal(b)
	return ad == bd && ae == be && negative(a) == negative(b)
}

func negative(s string) bool { return len(s) > 0 && s[0] == '-' }

// decimal splits a JSON number into its significant digits and the power
// of ten of the first of them.
func decimal(s string) (digits string, exp int) {
	mant, e := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, _ = strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	}
	mant = strings.TrimLeft(mant, "+-")
	point := strings.IndexByte(mant, '.')
	if point < 0 {
		point = len(mant)
	}
	all := strings.Replace(mant, ".", "", 1)
	trimmed := strings.TrimLeft(all, "0")
	if trimmed == "" {
		return "", 0
	}
	first := len(all) - len(trimmed) // index of the first significant digit
	return strings.TrimRight(trimmed, "0"), e + point - first - 1
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
