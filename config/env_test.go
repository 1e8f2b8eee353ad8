package config

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"HOST": "db.local", "EMPTY": "", "PASS": "p$w"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"redis://${HOST}:6379", "redis://db.local:6379"},
		{"${MISSING:-fallback}", "fallback"},
		{"${EMPTY:-fallback}", "fallback"},
		{"${EMPTY}", ""},
		{"${HOST:-x}", "db.local"},
		{"${MISSING:-}", ""},
		{"cost $$5 and ${PASS}", "cost $5 and p$w"},
		{"a $ b $", "a $ b $"},
		{"$${HOST}", "${HOST}"},
		{"${MISSING:-a:-b}", "a:-b"},
	} {
		got, problems := expand(tc.in, lookup)
		if len(problems) > 0 || got != tc.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tc.in, got, problems, tc.want)
		}
	}
	for _, tc := range []struct{ in, needle, msg string }{
		{"x ${NOPE} y", "${NOPE}", "environment variable NOPE is not set"},
		{"${BAD-NAME}", "${BAD-NAME}", "not a valid environment variable reference"},
		{"${}", "${}", "not a valid"},
		{"${1X}", "${1X}", "not a valid"},
		{"tail ${OPEN", "${OPEN", "unterminated"},
	} {
		_, problems := expand(tc.in, lookup)
		if len(problems) != 1 || problems[0].needle != tc.needle || !strings.Contains(problems[0].msg, tc.msg) {
			t.Errorf("expand(%q) problems = %+v, want one at %q saying %q", tc.in, problems, tc.needle, tc.msg)
		}
	}
	if _, problems := expand("${A} ${B}", lookup); len(problems) != 2 {
		t.Errorf("two missing variables: %d problems", len(problems))
	}
}
