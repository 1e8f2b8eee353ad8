package transform

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// TestExpressionsReadRecordValuesAsTheyAre: fields are read straight from
// the record, nested maps (plain or etl.Record), lists and JSON numbers
// included, and only the fields an expression reads are converted.
func TestExpressionsReadRecordValuesAsTheyAre(t *testing.T) {
	rec := etl.Record{
		"n":     json.Number("41"),
		"x":     json.Number("2.5e1"),
		"big":   json.Number("9223372036854775808"),
		"meta":  map[string]any{"region": "eu", "score": json.Number("7")},
		"inner": etl.Record{"k": "v", "deep": map[string]any{"z": true}},
		"tags":  []any{"a", json.Number("3"), map[string]any{"q": json.Number("1.5")}},
		"none":  nil,
		"bad":   json.Number("not a number"),
	}
	cases := map[string]any{
		"record.n + 1":                            int64(42),
		"record.x":                                25.0,
		"type(record.big) == uint":                true,
		"record.meta.region":                      "eu",
		"record.meta.score * 2":                   int64(14),
		"record.inner.k":                          "v",
		"record.inner.deep.z":                     true,
		"record.tags[0] + string(record.tags[1])": "a3",
		"record.tags[2].q":                        1.5,
		"size(record.tags)":                       int64(3),
		"'a' in record.tags":                      true,
		"record.none == null":                     true,
		"has(record.absent)":                      false,
		"has(record.meta.region)":                 true,
		// A map read whole is passed on as it is.
		"record.meta": map[string]any{"region": "eu", "score": json.Number("7")},
	}
	for expr, want := range cases {
		m, err := Map(map[string]string{"out": expr})
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		r, _, err := apply(t, m, clone(rec))
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if !equal(r["out"], want) {
			t.Errorf("%s = %#v, want %#v", expr, r["out"], want)
		}
	}
	for expr, wantErr := range map[string]string{
		"record.absent":      "absent",
		"record.meta.absent": "absent",
		"record.bad + 1":     `"not a number" is not a number`,
		"record.tags[5]":     "index",
	} {
		m, err := Map(map[string]string{"out": expr})
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if _, _, err := apply(t, m, clone(rec)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: err %v, want one containing %q", expr, err, wantErr)
		}
	}
}

func TestNumber(t *testing.T) {
	for in, want := range map[string]any{
		"12": int64(12), "-3": int64(-3), "12.5": 12.5, "1e3": 1000.0, "1E-1": 0.1,
		"18446744073709551615": uint64(18446744073709551615), "-9223372036854775808": int64(-9223372036854775808),
		"0.30000000000000004": 0.30000000000000004, "1.10": 1.1, "-0.0": 0.0, "0e5": 0.0,
		"1.2345678901234568e+20": 1.2345678901234568e+20, "1.7976931348623157e308": 1.7976931348623157e308,
		"5e-324": 5e-324, "0.000012345678901234568": 0.000012345678901234568,
	} {
		if got := number(in).Value(); got != want {
			t.Errorf("number(%s) = %#v, want %#v", in, got, want)
		}
	}
	// Numbers a double or a 64-bit integer cannot hold as written are
	// errors, never a rounded value.
	for in, want := range map[string]string{
		"18446744073709551616":   "does not fit a 64-bit integer",
		"-9223372036854775809":   "does not fit a 64-bit integer",
		"99999999999999999999":   "does not fit a 64-bit integer",
		"1e400":                  "beyond a double's range",
		"-1e400":                 "beyond a double's range",
		"1e-400":                 "more digits than a double holds",
		"0.12345678901234567891": "more digits than a double holds: CEL would round it to 0.12345678901234568",
		"12345678901234567.5":    "more digits than a double holds",
		"1.00000000000000000001": "more digits than a double holds",
	} {
		v := number(in)
		err, ok := v.Value().(error)
		if !ok || !strings.Contains(err.Error(), want) {
			t.Errorf("number(%s) = %v, want an error containing %q", in, v, want)
		}
	}
	if v := number("x1"); !strings.Contains(v.(error).Error(), `"x1" is not a number`) {
		t.Errorf("number(x1) = %v", v)
	}
}

func clone(r etl.Record) etl.Record {
	c := etl.Record{}
	for k, v := range r {
		c[k] = v
	}
	return c
}

func equal(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		if len(am) != len(bm) {
			return false
		}
		for k := range am {
			if !equal(am[k], bm[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}
