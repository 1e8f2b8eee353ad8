package etl

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// stdDecode is what the fast decoder must agree with.
func stdDecode(s string) (Record, bool) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var rec Record
	if err := dec.Decode(&rec); err != nil || rec == nil {
		return nil, false
	}
	if dec.More() {
		return nil, false // more than one value
	}
	return rec, true
}

var decodeSeeds = []string{
	`{}`, ` {"a":1} `, `{"id":1,"name":"x"}`, `{"a":{"b":[1,2,{"c":null}]},"d":true,"e":false}`,
	`{"n":-0.5e+10,"m":0,"k":-0,"big":12345678901234567890}`, `{"s":"a\"b\\c\/d\b\f\n\r\t"}`,
	`{"u":"\u00e9\u20ac\ud83d\ude00"}`, `{"bad":"\ud800"}`, `{"bad":"\udc00\ud800"}`, `{"raw":"é€😀"}`,
	"{\"inv\":\"\xff\"}", `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":tru}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":1}{"b":2}`, `{"a":1} x`, `[1]`, `null`, `"s"`, `{"a":[]}`, `{"a":[1,]}`,
	`{"dup":1,"dup":2}`, "{\"ctl\":\"\x01\"}", `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\uZZZZ"}`,
	`{"a":1E+2,"b":1e-2}`, `{"k\u0041y":1}`, `{"a":[[[[]]]]}`, `{`, `{"a":`, `{"a":"`, ``, `   `,
}

func checkDecodeAgrees(t *testing.T, s string) {
	t.Helper()
	var d recordDecoder
	got, ok := d.decode(s)
	want, wantOK := stdDecode(s)
	if !ok {
		return // declined: the caller asks encoding/json
	}
	if !wantOK {
		t.Fatalf("fast decoder accepted %q, encoding/json does not", s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decode(%q) = %#v, encoding/json gives %#v", s, got, want)
	}
}

func TestRecordDecoderAgreesWithEncodingJSON(t *testing.T) {
	accepted := 0
	for _, s := range decodeSeeds {
		checkDecodeAgrees(t, s)
		var d recordDecoder
		if _, ok := d.decode(s); ok {
			accepted++
		}
	}
	// The common cases take the fast path.
	var d recordDecoder
	for _, s := range []string{`{"id":1,"name":"x"}`, `{"u":"\u00e9\ud83d\ude00"}`, `{"a":{"b":[1,{"c":null}]}}`, `{"raw":"é€😀"}`} {
		if _, ok := d.decode(s); !ok {
			t.Errorf("fast path declined %q", s)
		}
	}
	if accepted < 12 {
		t.Fatalf("only %d seeds took the fast path", accepted)
	}
}

func FuzzRecordDecoder(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkDecodeAgrees(t, s) })
}
