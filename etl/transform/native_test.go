package transform

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
)

// TestNullStaysNullAtAnyDepth: the repros. null inside a list or
// a map an expression builds is null in the record written, not 0.
func TestNullStaysNullAtAnyDepth(t *testing.T) {
	rec := etl.Record{"id": json.Number("1"), "n": nil, "m": map[string]any{"x": nil, "l": []any{nil, map[string]any{"y": nil}}}}
	for expr, want := range map[string]any{
		"[record.n, record.id]":       []any{nil, int64(1)},
		"{'orig': record.n}":          map[string]any{"orig": nil},
		"[[null]]":                    []any{[]any{nil}},
		"{'a': {'b': [null, 1]}}":     map[string]any{"a": map[string]any{"b": []any{nil, int64(1)}}},
		"[record.m]":                  []any{rec["m"]},
		"record.m.l.map(x, x)":        []any{nil, map[string]any{"y": nil}},
		"{'k': record.m.l[1]}":        map[string]any{"k": map[string]any{"y": nil}},
		"[record.m.x, record.m.l[0]]": []any{nil, nil},
	} {
		got := mapOne(t, expr, rec)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", expr, got, want)
		}
	}
}

// TestListsOfMapsInMapsConvert: a list of maps inside a map, extended by
// an expression, converts (it failed with "unsupported type:
// map[interface {}]interface {}"), and the record's own values are not
// changed by it.
func TestListsOfMapsInMapsConvert(t *testing.T) {
	tags := []any{map[string]any{"k": "a", "n": json.Number("2")}, map[string]any{"k": "b", "v": []any{map[string]any{"deep": true}}}}
	rec := etl.Record{"tags": tags, "doc": map[string]any{"tags": tags}}
	got := mapOne(t, "record.tags + ['new']", rec)
	want := []any{tags[0], tags[1], "new"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	got = mapOne(t, "{'doc': record.doc, 'more': record.doc.tags + [{'k': null}]}", rec)
	want2 := map[string]any{"doc": rec["doc"], "more": []any{tags[0], tags[1], map[string]any{"k": nil}}}
	if !reflect.DeepEqual(got, want2) {
		t.Fatalf("got %#v, want %#v", got, want2)
	}
	if len(tags) != 2 || tags[0].(map[string]any)["n"] != json.Number("2") {
		t.Fatalf("the record's list changed: %#v", tags)
	}
}

// TestRecordAsAValueIsACopy: a field set to the record (or to a map that
// holds it) is a copy of the record as it came in, not the record itself,
// so the record written has no cycle.
func TestRecordAsAValueIsACopy(t *testing.T) {
	m, err := Map(map[string]string{"copy": "record", "wrap": "{'r': record}", "x": "2"})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := apply(t, m, etl.Record{"x": json.Number("1"), "n": nil})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"x": json.Number("1"), "n": nil}
	if !reflect.DeepEqual(r["copy"], in) || !reflect.DeepEqual(r["wrap"], map[string]any{"r": in}) {
		t.Fatalf("record %#v", r)
	}
	if r["x"] != int64(2) {
		t.Fatalf("x = %#v", r["x"])
	}
}

// TestNonStringMapKeysFailTheRecord: a CEL map with an int, uint or bool
// key has no record representation; the record fails with ErrMapKey and
// the key, at any depth, and string(key) is the way out.
func TestNonStringMapKeysFailTheRecord(t *testing.T) {
	for _, expr := range []string{"{1: 'a'}", "{'ok': [{true: 1}]}", "{2u: null}"} {
		m, err := Map(map[string]string{"out": expr})
		if err != nil {
			t.Fatal(err)
		}
		in := etl.Record{"a": "b"}
		_, _, err = apply(t, m, in)
		if !errors.Is(err, ErrMapKey) || !strings.Contains(err.Error(), "map out") {
			t.Errorf("%s: err %v, want ErrMapKey naming the field", expr, err)
		}
		if len(in) != 1 {
			t.Errorf("%s: the failed record changed: %v", expr, in)
		}
	}
	if got := mapOne(t, "{string(1): 'a'}", etl.Record{}); !reflect.DeepEqual(got, map[string]any{"1": "a"}) {
		t.Fatalf("string key: %#v", got)
	}
}

// TestValuesOfEveryKindComeOutAsTheyWentIn: each kind of value a source
// gives, read by an expression, comes out as the same value.
func TestValuesOfEveryKindComeOutAsTheyWentIn(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
	for _, c := range []struct{ in, want any }{
		{int64(math.MinInt64), int64(math.MinInt64)},
		{int64(math.MaxInt64), int64(math.MaxInt64)},
		{uint64(math.MaxUint64), uint64(math.MaxUint64)},
		{json.Number("-9223372036854775808"), int64(math.MinInt64)},
		{json.Number("18446744073709551615"), uint64(math.MaxUint64)},
		{json.Number("2.5"), 2.5},
		{math.MaxFloat64, math.MaxFloat64},
		{math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64},
		{math.Inf(1), math.Inf(1)},
		{math.Inf(-1), math.Inf(-1)},
		{"ünï\u2028😀\x00", "ünï\u2028😀\x00"},
		{[]byte{0, 0xff, 'a'}, []byte{0, 0xff, 'a'}},
		{at, at},
		{int32(-7), int64(-7)},
		{true, true},
	} {
		got := mapOne(t, "record.v", etl.Record{"v": c.in})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%#v came out %#v, want %#v", c.in, got, c.want)
		}
		got = mapOne(t, "[record.v]", etl.Record{"v": c.in})
		if !reflect.DeepEqual(got, []any{c.want}) {
			t.Errorf("[%#v] came out %#v", c.in, got)
		}
	}
	got := mapOne(t, "record.v", etl.Record{"v": math.NaN()})
	if f, ok := got.(float64); !ok || !math.IsNaN(f) {
		t.Errorf("NaN came out %#v", got)
	}
	if got := mapOne(t, "double('-Infinity')", etl.Record{}); got != math.Inf(-1) {
		t.Errorf("double('-Infinity') = %#v", got)
	}
	if got := mapOne(t, "record.v", etl.Record{"v": math.Copysign(0, -1)}); !math.Signbit(got.(float64)) {
		t.Errorf("-0 came out %#v", got)
	}
}

// mapOne returns the value of expr as a map sets it on a copy of rec.
func mapOne(t *testing.T, expr string, rec etl.Record) any {
	t.Helper()
	m, err := Map(map[string]string{"out": expr})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	r, _, err := apply(t, m, clone(rec))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return r["out"]
}
