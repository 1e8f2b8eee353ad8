package transform

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/agora-etl/agora/etl"
)

// ValueClasses turns on the kinds of values RandomValue gives beyond the
// ones every sink encoder carries today (null, bools, int64 at its edges,
// finite float64 at its edges, json.Number, unicode strings, nested lists
// and maps). Each is one switch, so a test can include a class once the
// encoders carry it.
type ValueClasses struct {
	// NaNInf: float64 NaN, +Inf and -Inf.
	NaNInf bool
	// Bytes: []byte.
	Bytes bool
	// Times: time.Time, in a zone, with nanoseconds.
	Times bool
	// BigUints: uint64 above the int64 range.
	BigUints bool
}

// AllValueClasses is every class: what a record can hold.
var AllValueClasses = ValueClasses{NaNInf: true, Bytes: true, Times: true, BigUints: true}

var (
	intEdges   = []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, 1 << 53, -(1 << 53) - 1}
	floatEdges = []float64{0.5, -2.25, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-7, 1e21, 123456.789, math.Copysign(0, -1)}
	numbers    = []string{"0", "-7", "9223372036854775807", "-9223372036854775808", "2.5", "1e3", "-1.5E-3"}
	runes      = []rune{'a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\x01', 'é', 'ß', '中', '\u2028', '\u2029', '😀', '\ufeff', '<', '&'}
)

// RandomValue returns a random record value, nested at most depth deep.
func RandomValue(rng *rand.Rand, c ValueClasses, depth int) any {
	n := 9
	if depth > 0 {
		n = 11
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		if rng.IntN(2) == 0 {
			return intEdges[rng.IntN(len(intEdges))]
		}
		return rng.Int64() - rng.Int64()
	case 3:
		if c.NaNInf && rng.IntN(3) == 0 {
			return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
		}
		if rng.IntN(2) == 0 {
			return floatEdges[rng.IntN(len(floatEdges))]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
	case 4:
		return json.Number(numbers[rng.IntN(len(numbers))])
	case 5, 6:
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		return b.String()
	case 7:
		if c.Bytes {
			b := make([]byte, rng.IntN(6))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return b
		}
		return "bytes off"
	case 8:
		if c.Times {
			return time.Unix(rng.Int64N(1<<35)-1<<34, rng.Int64N(1e9)).In(time.FixedZone("Z"+fmt.Sprint(rng.IntN(24)), (rng.IntN(24)-12)*3600))
		}
		if c.BigUints {
			return uint64(math.MaxInt64) + 1 + rng.Uint64N(math.MaxInt64)
		}
		return "times off"
	case 9:
		l := make([]any, rng.IntN(4))
		for i := range l {
			l[i] = RandomValue(rng, c, depth-1)
		}
		return l
	default:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[RandomName(rng)] = RandomValue(rng, c, depth-1)
		}
		return m
	}
}

// RandomName returns a field name: mostly plain, sometimes unicode.
func RandomName(rng *rand.Rand) string {
	names := []string{"a", "b", "c", "amount", "tags", "n", "é", "x_1", "日本"}
	return names[rng.IntN(len(names))]
}

// RandomRecord returns a record of up to n random fields, nested up to
// depth.
func RandomRecord(rng *rand.Rand, c ValueClasses, n, depth int) etl.Record {
	r := etl.Record{}
	for range rng.IntN(n + 1) {
		r[RandomName(rng)] = RandomValue(rng, c, depth)
	}
	return r
}

// SameValue reports whether a and b are the same record value: deeply
// equal, with NaN equal to NaN, times equal as instants in the same zone,
// and a json.Number equal to the int64, uint64 or float64 CEL reads it
// as.
func SameValue(a, b any) bool {
	a, b = readAs(a), readAs(b)
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y) && x.Location().String() == y.Location().String()
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !SameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, has := y[k]
			if !has || !SameValue(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// readAs is v as an expression reading it gives it back: a json.Number
// as its int64, uint64 or float64, an etl.Record as a plain map.
func readAs(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, ok := number(string(x)).Value().(int64); ok {
			return n
		}
		if n, ok := number(string(x)).Value().(uint64); ok {
			return n
		}
		return number(string(x)).Value()
	case etl.Record:
		return map[string]any(x)
	case int32:
		return int64(x)
	}
	return v
}
