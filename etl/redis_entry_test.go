package etl

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEntryDecoderFeedsOneDecoderEntryAfterEntry(t *testing.T) {
	var d entryDecoder
	long := `{"s":"` + strings.Repeat("y", 3000) + `"}`
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"data": `{"id":1}`}, `{"id":1}`},
		{map[string]any{"data": `{"id":1} trailing`}, `{"data":"{\"id\":1} trailing"}`},
		{map[string]any{"data": `{"id":2}{"id":3}`}, `{"data":"{\"id\":2}{\"id\":3}"}`},
		{map[string]any{"data": `{"id":`}, `{"data":"{\"id\":"}`},
		{map[string]any{"data": `{"big":12345678901234567890}`}, `{"big":12345678901234567890}`},
		{map[string]any{"data": long}, long},
		{map[string]any{"data": `[1]`}, `{"data":"[1]"}`},
		{map[string]any{"data": `  {"id":4}  `}, `{"data":"  {\"id\":4}  "}`},
		{map[string]any{"data": `{"id":5}`, "other": "x"}, `{"data":"{\"id\":5}","other":"x"}`},
		{map[string]any{"data": `{"id":6}`}, `{"id":6}`},
	} {
		b, _ := json.Marshal(d.record(tc.values))
		if string(b) != tc.want {
			t.Errorf("record(%v) = %s, want %s", tc.values, b, tc.want)
		}
	}
}

func TestEntryEncoderValuesSurviveTheArenaGrowing(t *testing.T) {
	var e entryEncoder
	e.reset()
	var vals [][]byte
	for i := 0; i < 200; i++ {
		v, err := e.value(Record{"i": i, "pad": strings.Repeat("p", i)})
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	for i, v := range vals {
		var r struct {
			I   int
			Pad string
		}
		if err := json.Unmarshal(v, &r); err != nil || r.I != i || len(r.Pad) != i {
			t.Fatalf("value %d = %s (%v)", i, v, err)
		}
	}
	if _, err := e.value(Record{"c": make(chan int)}); err == nil {
		t.Fatal("a channel encoded")
	}
}
