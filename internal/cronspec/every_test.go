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
