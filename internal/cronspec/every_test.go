package cronspec

import "testing"

func TestEveryCountsFromTheEpoch(t *testing.T) {
	runNextCases(t, []nextCase{
		// @every counts from the Unix epoch, not from the first call.
		{"@every 5m", "2026-01-15T10:02:30Z", []string{"2026-01-15T10:05:00Z", "2026-01-15T10:10:00Z"}},
		{"@every 5m", "2026-01-15T10:05:00Z", []string{"2026-01-15T10:10:00Z"}},
		{"@every 5m", "2026-01-15T10:04:59.999Z", []string{"2026-01-15T10:05:00Z"}},
		{"@every 7m", "2026-01-15T10:00:00Z", []string{"2026-01-15T10:02:00Z", "2026-01-15T10:09:00Z"}},
		{"@every 1h30m", "2026-01-15T10:00:00Z", []string{"2026-01-15T10:30:00Z", "2026-01-15T12:00:00Z"}},
		{"@every 168h", "2026-01-15T10:00:00Z", []string{"2026-01-22T00:00:00Z"}},
		{"@every 1s", "1969-12-31T23:59:58.5Z", []string{"1969-12-31T23:59:59Z", "1970-01-01T00:00:00Z"}},
		// A zone prefix does not move epoch-aligned slots.
		{"CRON_TZ=Asia/Kolkata @every 1h", "2026-01-15T10:20:00Z", []string{"2026-01-15T11:00:00Z"}},
	})
}

// TestEveryErrors: robfig/cron would round these to another interval.
func TestEveryErrors(t *testing.T) {
	checkParseErrors(t, []errorCase{
		{"@every", []string{"@every needs a duration such as @every 5m"}},
		{"@everyday", []string{`unknown descriptor "@everyday"`}},
		{"@every 0s", []string{"@every 0s: the interval must be at least 1s"}},
		{"@every -5m", []string{"at least 1s"}},
		{"@every 500ms", []string{"at least 1s"}},
		{"@every 1500ms", []string{"@every 1500ms: the interval must be a whole number of seconds"}},
		{"@every banana", []string{`@every: "banana" is not a duration (write it like 90s, 5m or 1h30m)`}},
	})
}
