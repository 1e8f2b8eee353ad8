package etl

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEncodeProblemNamesTheFieldAndTheValue(t *testing.T) {
	for _, tc := range []struct {
		rec  Record
		want string
	}{
		{Record{"a": 1.5, "ratio": math.Inf(1)}, `field "ratio": +Inf has no JSON form`},
		{Record{"x": math.NaN()}, `field "x": NaN has no JSON form`},
		{Record{"n": map[string]any{"l": []any{1, math.Inf(-1)}}}, `field "n": "l": [1]: -Inf has no JSON form`},
		{Record{"m": map[any]any{1: "one"}}, `field "m": a map with keys of type interface {} has no JSON form`},
		{Record{"c": make(chan int)}, `field "c": a chan int has no JSON form`},
		{Record{"num": json.Number("1e")}, `field "num": "1e" is not a JSON number`},
		{Record{"ok": []byte("x"), "t": time.Unix(0, 0), "f": float32(2)}, ""},
	} {
		if got := encodeProblem(tc.rec); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("encodeProblem(%v) = %q, want %q", tc.rec, got, tc.want)
		}
	}
}

func TestJSONSafeGivesEveryValueAForm(t *testing.T) {
	inner := map[string]any{"keep": "me"}
	rec := Record{
		"inf": math.Inf(1), "ninf": math.Inf(-1), "nan": math.NaN(), "f32": float32(math.Inf(1)),
		"keys": map[any]any{1: math.NaN(), "b": 2}, "list": []any{1, math.NaN()}, "inner": inner,
		"ch": make(chan int), "num": json.Number("x"), "ok": 1.5,
	}
	got, changed := jsonSafe(rec, 1)
	if !changed {
		t.Fatal("jsonSafe changed nothing")
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("the safe form does not encode: %v", err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"inf": "+Inf", "ninf": "-Inf", "nan": "NaN", "f32": "+Inf", "num": "x", "ok": 1.5} {
		if back[k] != want {
			t.Errorf("%s = %#v, want %#v", k, back[k], want)
		}
	}
	if keys := back["keys"].(map[string]any); keys["1"] != "NaN" || keys["b"] != 2.0 {
		t.Errorf("keys = %v, want 1: NaN, b: 2", keys)
	}
	if l := back["list"].([]any); l[0] != 1.0 || l[1] != "NaN" {
		t.Errorf("list = %v", l)
	}
	if _, ok := back["ch"].(string); !ok {
		t.Errorf("ch = %#v, want its text", back["ch"])
	}
	// The input is left as it was; what encodes is shared, not copied.
	if !math.IsInf(rec["inf"].(float64), 1) || got.(Record)["inner"].(map[string]any)["keep"] != "me" {
		t.Fatal("jsonSafe changed its input")
	}
	same := Record{"a": 1, "b": []any{"x"}}
	if out, changed := jsonSafe(same, 1); changed || out.(Record)["b"] == nil {
		t.Fatalf("a record that encodes came back changed: %v", out)
	}
}

// A record the fast encoder declines and encoding/json refuses (here an
// invalid json.Number, which encoding/json reports without a typed error)
// is rejected alone; the batch's other records are written.
func TestJSONLinesRejectEveryUnencodableRecordAlone(t *testing.T) {
	var out strings.Builder
	j := newJSONLWriter(&out)
	recs := []Record{
		{"id": 1},
		{"id": 2, "n": json.Number("1e")},
		{"id": 3, "m": map[any]any{true: 1}},
		{"id": 4, "x": math.NaN()},
		{"id": 5, "at": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), "b": []byte("hi")},
	}
	err := j.write(recs)
	rej, ok := err.(*RejectedError)
	if !ok || len(rej.Rejections) != 3 {
		t.Fatalf("write = %v, want records 1, 2 and 3 rejected", err)
	}
	for i, r := range rej.Rejections {
		if r.Index != i+1 || !strings.Contains(r.Err.Error(), "field") {
			t.Errorf("rejection %d: index %d, %v; want index %d naming the field", i, r.Index, r.Err, i+1)
		}
	}
	if err := j.w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "{\"id\":1}\n{\"at\":\"2026-01-02T03:04:05.000000006Z\",\"b\":\"aGk=\",\"id\":5}\n"
	if out.String() != want {
		t.Fatalf("written %q, want %q", out.String(), want)
	}
}
