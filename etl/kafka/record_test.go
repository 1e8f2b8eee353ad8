package kafka

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/agora-etl/agora/etl"
)

func TestDecodeValue(t *testing.T) {
	for in, want := range map[string]etl.Record{
		`{"n":12345678901234567890,"s":"x","o":{"a":[1]}}`: {"n": json.Number("12345678901234567890"), "s": "x", "o": map[string]any{"a": []any{json.Number("1")}}},
		` {"a":1} `:  {"a": json.Number("1")},
		`plain text`: {ValueField: "plain text"},
		`[1,2]`:      {ValueField: "[1,2]"},
		`{"a":1}{}`:  {ValueField: `{"a":1}{}`},
		`{"a":`:      {ValueField: `{"a":`},
		``:           {ValueField: ""},
		`null`:       {ValueField: "null"},
	} {
		if got := decodeValue([]byte(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("decodeValue(%q) = %#v, want %#v", in, got, want)
		}
	}
}

func TestEncoder(t *testing.T) {
	var e encoder
	e.reset()
	v, err := e.value(etl.Record{"b": "<&>", "a": json.Number("1.50")})
	if err != nil || string(v) != `{"a":1.50,"b":"<&>"}` {
		t.Fatalf("value = %s, %v", v, err)
	}
	v2, _ := e.value(etl.Record{"x": 1})
	if string(v) != `{"a":1.50,"b":"<&>"}` || string(v2) != `{"x":1}` {
		t.Fatalf("a later value changed an earlier one: %s %s", v, v2)
	}
	if _, err := e.value(etl.Record{"x": math.Inf(1)}); err == nil {
		t.Fatal("encoded +Inf")
	}
	for rec, want := range map[string]string{"s": "abc", "n": "42", "b": "false", "m": `{"k":1}`} {
		r := etl.Record{"s": "abc", "n": json.Number("42"), "b": false, "m": map[string]any{"k": 1}}
		k, err := e.key(rec, r)
		if err != nil || string(k) != want {
			t.Errorf("key(%s) = %s, %v; want %s", rec, k, err, want)
		}
	}
	if _, err := e.key("id", etl.Record{}); err == nil || err.Error() != `kafka: record has no key field "id"` {
		t.Errorf("missing key: %v", err)
	}
	if _, err := e.key("id", etl.Record{"id": nil}); err == nil || err.Error() != `kafka: key field "id" is null` {
		t.Errorf("null key: %v", err)
	}
}
