package sqlite

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestValueKeepsNumbersOrSaysWhy: every number is stored as the value it
// is, or refused naming it; none comes back another number.
func TestValueKeepsNumbersOrSaysWhy(t *testing.T) {
	for _, c := range []struct {
		in   json.Number
		want any
		err  string
	}{
		{"42", int64(42), ""},
		{"-9223372036854775808", int64(-9223372036854775808), ""},
		{"0.1", 0.1, ""},
		{"1e20", 1e20, ""},
		{"99999999999999999999", nil, "number 99999999999999999999: an integer beyond 64 bits"},
		{"-9223372036854775809", nil, "an integer beyond 64 bits"},
		{"1e400", nil, `number "1e400"`},
	} {
		got, err := value(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("value(%s) = %v, %v; want an error saying %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("value(%s) = %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
}
