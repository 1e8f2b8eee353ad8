package etl

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// recordEncoder appends records as JSON exactly as encoding/json's Encoder
// with SetEscapeHTML(false) writes them (keys sorted), without reflection,
// for the value types records hold: string, json.Number, float64, the
// integers, bool, nil, map[string]any, Record and []any. For anything else
// (time.Time, structs, a NaN) it declines and the caller uses encoding/json,
// which writes the value or returns its error.
type recordEncoder struct {
	keys [][]string // sort scratch, one per nesting depth
}

// appendRecord appends rec and a newline to b; ok is false when it
// declined, and then b is returned unchanged.
func (e *recordEncoder) appendRecord(b []byte, rec Record) ([]byte, bool) {
	start := len(b)
	b, ok := e.object(b, rec, 0)
	if !ok {
		return b[:start], false
	}
	return append(b, '\n'), true
}

func (e *recordEncoder) object(b []byte, m map[string]any, depth int) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	if depth >= maxDepth {
		return b, false
	}
	for len(e.keys) <= depth {
		e.keys = append(e.keys, nil)
	}
	keys := e.keys[depth][:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.keys[depth] = keys
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = e.value(b, m[k], depth+1); !ok {
			return b, false
		}
	}
	clear(keys) // let the key strings go
	return append(b, '}'), true
}

func (e *recordEncoder) value(b []byte, v any, depth int) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, x), true
	case json.Number:
		s := string(x)
		if s == "" {
			s = "0"
		}
		if !validNumber(s) {
			return b, false
		}
		return append(b, s...), true
	case float64:
		return appendFloat(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	case bool:
		return strconv.AppendBool(b, x), true
	case map[string]any:
		return e.object(b, x, depth)
	case Record:
		return e.object(b, x, depth)
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		if depth >= maxDepth {
			return b, false
		}
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = e.value(b, el, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendFloat writes f as encoding/json does: like %g without needless
// exponents, and exponents without leading zeros.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// validNumber reports whether s is a JSON number.
func validNumber(s string) bool {
	p := parser{s: s}
	_, ok := p.number()
	return ok && p.i == len(s)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s quoted the way encoding/json does without HTML
// escaping: ", \ and control characters escaped, invalid UTF-8 as U+FFFD,
// U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
