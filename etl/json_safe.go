package etl

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// encodeProblem returns where and why v cannot be written as JSON, such as
// `field "ratio": +Inf has no JSON form`, or "" when it can. Sinks put it
// in the rejection of a record they cannot encode, so the dead letter says
// which value is the poison.
func encodeProblem(rec Record) string {
	for _, k := range sortedKeys(rec) {
		if why := valueProblem(rec[k], 0); why != "" {
			return fmt.Sprintf("field %s: %s", strconv.Quote(k), why)
		}
	}
	if _, err := json.Marshal(rec); err != nil {
		return err.Error()
	}
	return ""
}

// valueProblem is encodeProblem for one value; nested keys and indexes are
// prefixed to the reason.
func valueProblem(v any, depth int) string {
	if depth >= maxDepth {
		return fmt.Sprintf("nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil, string, bool, int, int64, int32, uint64, time.Time, []byte:
		return ""
	case float64:
		return floatProblem(x)
	case float32:
		return floatProblem(float64(x))
	case json.Number:
		if s := string(x); s != "" && !validNumber(s) {
			return fmt.Sprintf("%q is not a JSON number", s)
		}
		return ""
	case map[string]any:
		return mapProblem(x, depth)
	case Record:
		return mapProblem(x, depth)
	case []any:
		for i, el := range x {
			if why := valueProblem(el, depth+1); why != "" {
				return fmt.Sprintf("[%d]: %s", i, why)
			}
		}
		return ""
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.Interface {
		return fmt.Sprintf("a map with keys of type %s has no JSON form (object keys are strings)", rv.Type().Key())
	}
	if _, err := json.Marshal(v); err != nil {
		return fmt.Sprintf("a %T has no JSON form: %v", v, err)
	}
	return ""
}

func floatProblem(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN has no JSON form"
	case math.IsInf(f, 1):
		return "+Inf has no JSON form"
	case math.IsInf(f, -1):
		return "-Inf has no JSON form"
	}
	return ""
}

func mapProblem(m map[string]any, depth int) string {
	for _, k := range sortedKeys(m) {
		if why := valueProblem(m[k], depth+1); why != "" {
			return fmt.Sprintf("%s: %s", strconv.Quote(k), why)
		}
	}
	return ""
}

// jsonSafe returns v with every value JSON cannot carry replaced by its
// text, so a dead letter always encodes: NaN, +Inf and -Inf become the
// strings "NaN", "+Inf" and "-Inf", a map's keys become their fmt text, a
// value nested deeper than maxDepth and anything else encoding/json
// refuses becomes its fmt text. Values that encode are returned as they
// are, unchanged and uncopied; maps and lists are copied only on the way to
// a value that changes.
func jsonSafe(v any, depth int) (any, bool) {
	switch x := v.(type) {
	case nil, string, bool, int, int64, int32, uint64, time.Time, []byte:
		return v, false
	case float64:
		if floatProblem(x) != "" {
			return floatText(x), true
		}
		return v, false
	case float32:
		if floatProblem(float64(x)) != "" {
			return floatText(float64(x)), true
		}
		return v, false
	case json.Number:
		if s := string(x); s != "" && !validNumber(s) {
			return s, true
		}
		return v, false
	}
	if depth >= maxDepth {
		return fmt.Sprint(v), true
	}
	switch x := v.(type) {
	case Record:
		m, changed := safeMap(x, depth)
		if changed {
			return Record(m), true
		}
		return v, false
	case map[string]any:
		return safeMap(x, depth)
	case []any:
		var out []any
		for i, el := range x {
			s, changed := jsonSafe(el, depth+1)
			if changed && out == nil {
				out = make([]any, len(x))
				copy(out, x)
			}
			if out != nil {
				out[i] = s
			}
		}
		if out != nil {
			return out, true
		}
		return v, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map {
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			s, _ := jsonSafe(it.Value().Interface(), depth+1)
			out[fmt.Sprint(it.Key().Interface())] = s
		}
		return out, true
	}
	if _, err := json.Marshal(v); err != nil {
		return fmt.Sprint(v), true
	}
	return v, false
}

// safeMap is jsonSafe for a map with string keys.
func safeMap(m map[string]any, depth int) (map[string]any, bool) {
	var out map[string]any
	for k, el := range m {
		s, changed := jsonSafe(el, depth+1)
		if !changed {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
			for k2, v2 := range m {
				out[k2] = v2
			}
		}
		out[k] = s
	}
	if out != nil {
		return out, true
	}
	return m, false
}

func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	}
	return "-Inf"
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
