package transform

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
)

func apply(t *testing.T, tr etl.Transform, r etl.Record) (etl.Record, bool, error) {
	t.Helper()
	return tr.Apply(context.Background(), r)
}

func TestFilterKeepsRecordsTheExpressionHoldsFor(t *testing.T) {
	f, err := Filter("record.amount > 0 && record.kind != 'test'")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		rec  etl.Record
		keep bool
	}{
		{etl.Record{"amount": json.Number("12"), "kind": "sale"}, true},
		{etl.Record{"amount": json.Number("-0.5"), "kind": "sale"}, false},
		{etl.Record{"amount": 2.5, "kind": "test"}, false},
		{etl.Record{"amount": int64(3), "kind": "sale"}, true},
	}
	for _, c := range cases {
		_, keep, err := apply(t, f, c.rec)
		if err != nil || keep != c.keep {
			t.Errorf("%v: keep %v, err %v; want %v", c.rec, keep, err, c.keep)
		}
	}
	if _, _, err := apply(t, f, etl.Record{"kind": "sale"}); err == nil || !strings.Contains(err.Error(), "amount") {
		t.Errorf("missing field: err %v, want one naming it", err)
	}
}

func TestMapSetsAndRemovesFields(t *testing.T) {
	m, err := Map(map[string]string{
		"total": "double(record.amount) * 1.2",
		"day":   "string(record.at).substring(0, 10)",
		"at":    "null",
		"tags":  "[record.kind, 'x']",
	})
	if err != nil {
		t.Fatal(err)
	}
	r, keep, err := apply(t, m, etl.Record{"amount": json.Number("10"), "at": "2026-03-01T10:00:00Z", "kind": "sale"})
	if err != nil || !keep {
		t.Fatalf("keep %v, err %v", keep, err)
	}
	if r["total"] != 12.0 || r["day"] != "2026-03-01" || r["kind"] != "sale" {
		t.Fatalf("record %v", r)
	}
	if _, has := r["at"]; has {
		t.Fatalf("at set to null is still there: %v", r)
	}
	if tags, _ := r["tags"].([]any); len(tags) != 2 || tags[0] != "sale" || tags[1] != "x" {
		t.Fatalf("tags %#v, want []any{sale, x}", r["tags"])
	}
	in := etl.Record{"amount": "ten", "at": "2026", "kind": "sale"}
	if _, _, err := apply(t, m, in); err == nil {
		t.Fatal("want an error for double(\"ten\")")
	}
	if in["at"] != "2026" || len(in) != 3 {
		t.Fatalf("a failed map changed the record: %v", in)
	}
}

func TestMapTimestampsAndInts(t *testing.T) {
	m, err := Map(map[string]string{"n": "record.n + 1", "ts": "timestamp(record.at)", "hour": "timestamp(record.at).getHours()"})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := apply(t, m, etl.Record{"n": json.Number("41"), "at": "2026-03-01T10:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if r["n"] != int64(42) || r["hour"] != int64(10) || !r["ts"].(time.Time).Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("record %#v", r)
	}
}

func TestCompileErrorsArePlacedInTheExpression(t *testing.T) {
	_, err := Filter("record.amount >")
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Line != 1 || ce.Col != 16 {
		t.Fatalf("err %v, want a CompileError at 1:16", err)
	}
	_, err = Filter("record.amount + 1")
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "want bool") {
		t.Fatalf("non-bool filter: %v", err)
	}
	_, err = Map(map[string]string{"a": "1", "b": "record.\n  x y"})
	var fe *FieldCompileError
	if !errors.As(err, &fe) || fe.Field != "b" || !errors.As(err, &ce) || ce.Line != 2 || ce.Offset() != 12 {
		t.Fatalf("map err %v (%+v)", err, ce)
	}
	_, err = Filter("undefined_var > 1")
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "undefined_var") {
		t.Fatalf("undeclared: %v", err)
	}
}

func TestDropKeepRename(t *testing.T) {
	r := etl.Record{"a": 1, "b": 2, "c": 3, "d": 4}
	r, _, _ = apply(t, Drop("d", "missing"), r)
	r, _, _ = apply(t, Keep("a", "b", "c"), r)
	rn, err := Rename(map[string]string{"a": "b", "b": "a", "c": "z"})
	if err != nil {
		t.Fatal(err)
	}
	r, _, _ = apply(t, rn, r)
	if len(r) != 3 || r["a"] != 2 || r["b"] != 1 || r["z"] != 3 {
		t.Fatalf("record %v", r)
	}
	if _, err := Rename(map[string]string{"a": "x", "b": "x"}); err == nil || !strings.Contains(err.Error(), `renamed to "x" too`) {
		t.Fatalf("two to one: %v", err)
	}
}

// TestMapNamesTheFieldThatFailed: a map of several fields evaluates them
// in one program; when that fails, the error names the first field, in
// name order, whose expression fails, and the record is left as it was.
func TestMapNamesTheFieldThatFailed(t *testing.T) {
	m, err := Map(map[string]string{"a": "record.x + 1", "b": "record.missing", "c": "record.other.y", "d": "'ok' // a comment"})
	if err != nil {
		t.Fatal(err)
	}
	in := etl.Record{"x": json.Number("1")}
	if _, _, err := apply(t, m, in); err == nil || !strings.Contains(err.Error(), `map b = "record.missing"`) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err %v, want one naming b", err)
	}
	if len(in) != 1 || in["x"] != json.Number("1") {
		t.Fatalf("a failed map changed the record: %v", in)
	}
	r, _, err := apply(t, m, etl.Record{"x": json.Number("1"), "missing": nil, "other": map[string]any{"y": "z"}})
	if err != nil {
		t.Fatal(err)
	}
	if r["a"] != int64(2) || r["c"] != "z" || r["d"] != "ok" {
		t.Fatalf("record %v", r)
	}
	if _, has := r["b"]; has {
		t.Fatalf("b, null, is set: %v", r)
	}
}

// TestMapOfSeveralFieldsIsOneProgram: whatever the fields' types, a map of
// two fields or more has its one program; a map of one field does not need it.
func TestMapOfSeveralFieldsIsOneProgram(t *testing.T) {
	for _, fields := range []map[string]string{
		{"a": "1.0", "b": "record.x * 2.0"},
		{"a": "'s'", "b": "record.x"},
	} {
		tr, err := Map(fields)
		if err != nil {
			t.Fatal(err)
		}
		if tr.(*mapper).all == nil {
			t.Errorf("%v: no single program", fields)
		}
	}
	tr, err := Map(map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.(*mapper).all != nil {
		t.Error("a map of one field has a second program")
	}
}
