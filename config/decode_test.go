package config

import (
	"strings"
	"testing"
	"time"
)

// check runs one decoder helper on a one-table document and returns the
// diagnostics it recorded.
func check(t *testing.T, doc string, run func(d *decoder, m map[string]any)) Diagnostics {
	t.Helper()
	d := &decoder{file: "t.toml", ix: newIndex([]byte(doc)), lookupEnv: noEnv, broken: map[string]bool{}}
	m := map[string]any{}
	if err := tomlUnmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	run(d, m)
	return d.diags.sorted()
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		value  string
		zeroOK bool
		want   time.Duration
		msg    string
	}{
		{`"90s"`, false, 90 * time.Second, ""},
		{`" 1h30m "`, false, 90 * time.Minute, ""},
		{`45`, false, 45 * time.Second, ""},
		{`0.5`, false, 500 * time.Millisecond, ""},
		{`0`, true, 0, ""},
		{`0`, false, 0, "0s must be positive"},
		{`"-1s"`, true, 0, "-1s must be zero or more"},
		{`"5 minutes"`, false, 0, `"5 minutes" is not a duration`},
		{`true`, false, 0, "want a duration"},
		{`9223372036854775807`, false, 0, "seconds is too long"},
		{`nan`, false, 0, "not a usable duration"},
	} {
		var got time.Duration
		ds := check(t, "d = "+tc.value, func(d *decoder, m map[string]any) {
			got, _ = d.duration(m, nil, "d", tc.zeroOK)
		})
		switch {
		case tc.msg == "" && (len(ds) != 0 || got != tc.want):
			t.Errorf("d = %s: %s, %v; want %s", tc.value, got, ds, tc.want)
		case tc.msg != "" && (len(ds) != 1 || !strings.Contains(ds[0].Message, tc.msg) || ds[0].Line != 1 || ds[0].Col != 5):
			t.Errorf("d = %s: diagnostics %v, want one at 1:5 saying %q", tc.value, ds, tc.msg)
		}
	}
}

func TestIntegerAndTypes(t *testing.T) {
	ds := check(t, "a = 3\nb = 70000\nc = \"x\"\nd = 1.0\n", func(d *decoder, m map[string]any) {
		if n, ok := d.integer(m, nil, "a", 0, 10); !ok || n != 3 {
			t.Errorf("a = %d, %v", n, ok)
		}
		if _, ok := d.integer(m, nil, "b", 0, 65535); ok {
			t.Error("b in range")
		}
		if _, ok := d.integer(m, nil, "c", 0, 1); ok {
			t.Error("c is an integer")
		}
		if _, ok := d.boolean(m, nil, "d"); ok {
			t.Error("d is a boolean")
		}
		if _, ok := d.str(m, nil, "missing"); ok {
			t.Error("missing key found")
		}
	})
	want := []string{
		"t.toml:2:5: b: 70000 is out of range: want 0 to 65535",
		"t.toml:3:5: c: want an integer, got a string",
		"t.toml:4:5: d: want a boolean, got a float",
	}
	if got := ds.Error(); got != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

func TestHint(t *testing.T) {
	if got := hint("minuts", []string{"seconds", "minutes"}, "keys"); got != ` (did you mean "minutes"?)` {
		t.Errorf("hint = %q", got)
	}
	if got := hint("zzz", []string{"b", "a"}, "keys"); got != "; known keys: a, b" {
		t.Errorf("hint = %q", got)
	}
	if got := hint("zzz", nil, "keys"); got != "; no keys are known" {
		t.Errorf("hint = %q", got)
	}
}

func TestTables(t *testing.T) {
	ds := check(t, "a = [{x = 1}, 2]\nb = [{x = 1}]\nc = 1\n[[d]]\nx = 1\n", func(d *decoder, m map[string]any) {
		if _, ok := d.tables(m, nil, "a"); ok {
			t.Error("a is an array of tables")
		}
		if ts, ok := d.tables(m, nil, "b"); !ok || len(ts) != 1 {
			t.Errorf("b = %v, %v", ts, ok)
		}
		if _, ok := d.tables(m, nil, "c"); ok {
			t.Error("c is an array of tables")
		}
		if ts, ok := d.tables(m, nil, "d"); !ok || len(ts) != 1 {
			t.Errorf("d = %v, %v", ts, ok)
		}
	})
	want := "t.toml:1:15: a[1]: want a table, got an integer\nt.toml:3:5: c: want an array of tables, got an integer"
	if ds.Error() != want {
		t.Errorf("diagnostics:\n%s\nwant\n%s", ds.Error(), want)
	}
}
