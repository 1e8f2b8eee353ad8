package reltime

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in, want, err string
	}{
		{"2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z", ""},
		{"2026-12-01T01:00:00+01:00", "2026-12-01T00:00:00Z", ""},
		{"-24h", "2026-12-02T09:00:00Z", ""},
		{"90m", "2026-12-03T10:30:00Z", ""},
		{"0s", "2026-12-03T09:00:00Z", ""},
		{"yesterday", "", `"yesterday": want an RFC 3339 time`},
		{"2026-12-01", "", "want an RFC 3339 time"},
		{"", "", "want an RFC 3339 time"},
	} {
		got, err := Parse(c.in, now)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %v, %v; want error %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got.UTC().Format(time.RFC3339) != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}
