package runtime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// TestCronInIsCRON_TZ: CronIn reads the times in the zone, through both
// daylight saving changes of Europe/Berlin in 2026 (March 29 02:00 → 03:00,
// October 25 03:00 → 02:00), with the same rules as the CRON_TZ= prefix.
func TestCronInIsCRON_TZ(t *testing.T) {
	for _, tc := range []nextCase{
		{"30 2 * * *", "2026-03-28T12:00:00+01:00", []string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"0 9 * * *", "2026-03-28T12:00:00+01:00", []string{"2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"}},
		{"30 2 * * *", "2026-10-24T12:00:00+02:00", []string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"0 * * * *", "2026-10-25T01:30:00+02:00", []string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"}},
	} {
		s, err := runtime.CronIn(tc.expr, "Europe/Berlin")
		if err != nil {
			t.Fatalf("CronIn(%q): %v", tc.expr, err)
		}
		if s.Expr() != "CRON_TZ=Europe/Berlin "+tc.expr {
			t.Errorf("Expr() = %q", s.Expr())
		}
		at := instant(t, tc.after)
		for _, w := range tc.want {
			got := s.Next(at)
			if !got.Equal(instant(t, w)) {
				t.Errorf("CronIn(%q).Next(%s) = %s, want %s", tc.expr, at, got, w)
			}
			at = got
		}
	}
}

func TestCronInRefuses(t *testing.T) {
	for _, tc := range []struct{ expr, zone, want string }{
		{"0 * * * *", "Europe/Berlln", `unknown time zone "Europe/Berlln"`},
		{"0 * * * *", "", `time zone "": want an IANA name`},
		{"0 * * * *", "Europe/Berlin x", "want an IANA name"},
		{"CRON_TZ=UTC 0 * * * *", "Europe/Berlin", "already has a CRON_TZ= prefix"},
		{"0 0 30 2 *", "Europe/Berlin", "never fires"},
	} {
		_, err := runtime.CronIn(tc.expr, tc.zone)
		if !errors.Is(err, runtime.ErrInvalidSchedule) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CronIn(%q, %q) = %v, want %q", tc.expr, tc.zone, err, tc.want)
		}
	}
	if err := runtime.CheckTimeZone("Mars/Olympus"); err == nil || !strings.Contains(err.Error(), "CRON_TZ=") {
		t.Errorf("CheckTimeZone: %v, want an error mentioning CRON_TZ=", err)
	}
}
