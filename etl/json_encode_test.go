package etl

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

func stdEncode(t *testing.T, rec Record) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(rec)
	return buf.Bytes(), err
}

func checkEncodeAgrees(t *testing.T, rec Record) {
	t.Helper()
	var e recordEncoder
	got, ok := e.appendRecord([]byte("prefix"), rec)
	if !ok {
		if string(got) != "prefix" {
			t.Fatalf("a declined record left %q", got)
		}
		return
	}
	want, err := stdEncode(t, rec)
	if err != nil {
		t.Fatalf("fast encoder wrote %q for %#v, encoding/json fails: %v", got, rec, err)
	}
	if string(got[len("prefix"):]) != string(want) {
		t.Fatalf("encode(%#v)\n= %s\nencoding/json: %s", rec, got[len("prefix"):], want)
	}
}

func TestRecordEncoderAgreesWithEncodingJSON(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, 5e-324, math.MaxFloat64, 0.1, 1.0 / 3}
	for _, f := range floats {
		checkEncodeAgrees(t, Record{"f": f})
	}
	for _, rec := range []Record{
		{},
		{"b": 1, "a": "x", "c": nil, "d": true, "e": false},
		{"s": "quote\" back\\ nl\n tab\t cr\r bs\b ff\f ctl\x01\x1f del\x7f <&> é € 😀 \u2028 \u2029 bad\xff\xfe"},
		{"n": json.Number("12345678901234567890"), "z": json.Number(""), "neg": json.Number("-0.5e+10")},
		{"nested": map[string]any{"y": []any{1, "two", nil, map[string]any{"k": 1.5}}, "x": Record{"r": int64(-7)}}},
		{"ints": []any{int(1), int64(-2), int32(3), uint64(18446744073709551615)}},
		{"empty": []any{}, "nilslice": []any(nil), "nilmap": map[string]any(nil)},
		{"k\"ey\n": 1, "é": 2, "\xff": 3},
	} {
		checkEncodeAgrees(t, rec)
	}
	// Declined: encoding/json decides (and reports the error).
	var e recordEncoder
	for _, rec := range []Record{
		{"t": time.Unix(0, 0)}, {"nan": math.NaN()}, {"inf": math.Inf(1)},
		{"num": json.Number("1x")}, {"typed": []string{"a"}}, {"deep": Record{"x": struct{}{}}},
	} {
		if _, ok := e.appendRecord(nil, rec); ok {
			t.Errorf("fast path took %#v", rec)
		}
	}
	if _, ok := e.appendRecord(nil, Record{"id": 1, "name": "x"}); !ok {
		t.Fatal("fast path declined a plain record")
	}
}

func FuzzRecordEncoder(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Add("{\"s\":\"\xff\\u2028\\u0001<>&\"}")
	// Whatever the decoders make of the input, the fast encoder writes it
	// as encoding/json does.
	f.Fuzz(func(t *testing.T, s string) {
		if rec, ok := stdDecode(s); ok {
			checkEncodeAgrees(t, rec)
			var floats Record
			if json.Unmarshal([]byte(s), &floats) == nil {
				checkEncodeAgrees(t, floats)
			}
		}
	})
}
