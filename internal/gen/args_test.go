package gen

import (
	"reflect"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	text := `//agora:schedule id=a cron="0 * * * *"  once x=` + "`raw \"q\"`"
	name, off := directiveName(text)
	if name != "schedule" || off != 16 {
		t.Fatalf("directiveName = %q, %d", name, off)
	}
	args, errs := splitArgs(text[off:], off)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := []arg{
		{Key: "id", KeyOff: 17, Value: "a", ValueOff: 20, HasValue: true},
		{Key: "cron", KeyOff: 22, Value: "0 * * * *", ValueOff: 27, HasValue: true, Quoted: true},
		{Key: "once", KeyOff: 40},
		{Key: "x", KeyOff: 45, Value: `raw "q"`, ValueOff: 47, HasValue: true, Quoted: true},
	}
	if !reflect.DeepEqual(args, want) {
		t.Fatalf("got %+v\nwant %+v", args, want)
	}
	for _, a := range want {
		if text[a.KeyOff:a.KeyOff+len(a.Key)] != a.Key {
			t.Errorf("offset of %s points at %q", a.Key, text[a.KeyOff:])
		}
	}
}

func TestSplitArgsErrors(t *testing.T) {
	for _, text := range []string{` cron="0 *`, ` cron="a"b`, ` =x`, ` cron="\q"`} {
		if _, errs := splitArgs(text, 0); len(errs) == 0 {
			t.Errorf("splitArgs(%q): no error", text)
		}
	}
	args, errs := splitArgs(` cron="a \" b" once`, 0)
	if len(errs) != 0 || len(args) != 2 || args[0].Value != `a " b` {
		t.Fatalf("escaped quote: %+v %v", args, errs)
	}
}
