package etl

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func TestJSONCodecRoundTrip(t *testing.T) {
	var d JSONDecoder
	var e JSONEncoder
	in := `{"a":1.50,"b":"<&>","c":{"d":[1,"x",null,true]}}`
	rec, ok := d.DecodeObject(in)
	want := Record{"a": json.Number("1.50"), "b": "<&>", "c": map[string]any{"d": []any{json.Number("1"), "x", nil, true}}}
	if !ok || !reflect.DeepEqual(rec, want) {
		t.Fatalf("DecodeObject = %#v, %v", rec, ok)
	}
	for _, bad := range []string{"", " {}", "[1]", `{"a":1}{}`, `{"a":`} {
		if _, ok := d.DecodeObject(bad); ok {
			t.Errorf("DecodeObject(%q) ok", bad)
		}
	}
	out, err := e.Encode(rec)
	if err != nil || string(out) != in {
		t.Fatalf("Encode = %s, %v; want %s", out, err, in)
	}
	second, _ := e.Encode(Record{"x": 1})
	if string(out) != in || string(second) != `{"x":1}` {
		t.Fatalf("values of one batch overlap: %s %s", out, second)
	}
	if _, err := e.Encode(Record{"x": math.NaN()}); err == nil {
		t.Fatal("encoded NaN")
	}
	e.Reset()
	if third, _ := e.Encode(Record{"y": "z"}); string(third) != `{"y":"z"}` {
		t.Fatalf("after Reset: %s", third)
	}
}
