package cronspec

import (
	"strings"
	"testing"
	"time"
)

// instant parses an RFC 3339 literal; "" is the zero time.
func instant(t *testing.T, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad literal %q: %v", s, err)
	}
	return v
}

// nextCase asserts that successive calls of Next, starting at after, return
// want in order.
type nextCase struct {
	expr  string
	after string
	want  []string
}

func runNextCases(t *testing.T, cases []nextCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.expr+"/"+tc.after, func(t *testing.T) {
			s, err := Parse(tc.expr)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			at := instant(t, tc.after)
			for i, w := range tc.want {
				want := instant(t, w)
				got := s.Next(at)
				if !got.Equal(want) {
					t.Fatalf("call %d: Next(%s) = %s, want %s", i+1, at.Format(time.RFC3339), fmtTime(got), fmtTime(want))
				}
				at = got
			}
		})
	}
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "zero time"
	}
	return t.Format(time.RFC3339Nano) + " (" + t.UTC().Format(time.RFC3339) + ")"
}

// mustParse is Parse for expressions the test knows to be good.
func mustParse(t testing.TB, expr string) Spec {
	t.Helper()
	s, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	return s
}

func TestNextFields(t *testing.T) {
	runNextCases(t, []nextCase{
		// Five fields.
		{"CRON_TZ=UTC 0 * * * *", "2026-01-15T10:20:00Z", []string{"2026-01-15T11:00:00Z", "2026-01-15T12:00:00Z"}},
		{"CRON_TZ=UTC 0 * * * *", "2026-01-15T10:00:00Z", []string{"2026-01-15T11:00:00Z"}},
		{"CRON_TZ=UTC 0 * * * *", "2026-01-15T10:59:59.999999999Z", []string{"2026-01-15T11:00:00Z"}},
		{"CRON_TZ=UTC */15 9-17 * * 1-5", "2026-01-16T17:50:00Z", []string{"2026-01-19T09:00:00Z", "2026-01-19T09:15:00Z"}},
		{"CRON_TZ=UTC 0 9 * * mon-fri", "2026-01-16T10:00:00Z", []string{"2026-01-19T09:00:00Z"}},
		{"CRON_TZ=UTC 0 9 * * 0", "2026-01-15T00:00:00Z", []string{"2026-01-18T09:00:00Z"}},
		{"CRON_TZ=UTC 0 9 * * SUN", "2026-01-15T00:00:00Z", []string{"2026-01-18T09:00:00Z"}},
		{"CRON_TZ=UTC 0 0 * * 6,0", "2026-01-15T00:00:00Z", []string{"2026-01-17T00:00:00Z", "2026-01-18T00:00:00Z", "2026-01-24T00:00:00Z"}},
		{"CRON_TZ=UTC 0 0 ? * 1", "2026-01-15T00:00:00Z", []string{"2026-01-19T00:00:00Z"}},
		{"CRON_TZ=UTC 0 0 1 jan,jul *", "2026-02-01T00:00:00Z", []string{"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
		{"CRON_TZ=UTC 59 23 31 12 *", "2026-12-31T23:59:00Z", []string{"2027-12-31T23:59:00Z"}},
		// Months without day 31 are skipped.
		{"CRON_TZ=UTC 0 0 31 * *", "2026-04-01T00:00:00Z", []string{"2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
		// Day of month and day of week both restricted: either matches.
		{"CRON_TZ=UTC 0 12 13 * 5", "2026-04-08T00:00:00Z", []string{"2026-04-10T12:00:00Z", "2026-04-13T12:00:00Z", "2026-04-17T12:00:00Z"}},
		// A stepped field counts as restricted, so "*/2" days OR Mondays.
		{"CRON_TZ=UTC 0 0 */2 * 1", "2026-04-01T12:00:00Z", []string{"2026-04-03T00:00:00Z", "2026-04-05T00:00:00Z", "2026-04-06T00:00:00Z", "2026-04-07T00:00:00Z"}},
		// Leap day.
		{"CRON_TZ=UTC 0 0 29 2 *", "2026-03-01T00:00:00Z", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		// 2100 is not a leap year: eight years to the next leap day.
		{"CRON_TZ=UTC 0 0 29 2 *", "2096-03-01T00:00:00Z", []string{"2104-02-29T00:00:00Z"}},
		{"CRON_TZ=America/New_York 0 12 29 2 *", "2096-03-01T00:00:00Z", []string{"2104-02-29T12:00:00-05:00"}},
		{"CRON_TZ=UTC 0 0 * feb *", "2028-02-28T12:00:00Z", []string{"2028-02-29T00:00:00Z", "2029-02-01T00:00:00Z"}},
		// Never fires.
		// Six fields: a leading seconds field.
		{"CRON_TZ=UTC */10 * * * * *", "2026-01-15T10:20:05Z", []string{"2026-01-15T10:20:10Z", "2026-01-15T10:20:20Z"}},
		{"CRON_TZ=UTC 30 0 9 * * *", "2026-01-15T10:00:00Z", []string{"2026-01-16T09:00:30Z"}},
		{"CRON_TZ=UTC * * * * * *", "2026-01-15T10:20:05.5Z", []string{"2026-01-15T10:20:06Z", "2026-01-15T10:20:07Z"}},
		// Zones with whole, half and quarter hour offsets.
		{"CRON_TZ=Asia/Kolkata 0 9 * * *", "2026-01-15T00:00:00Z", []string{"2026-01-15T09:00:00+05:30"}},
		{"CRON_TZ=Asia/Kathmandu 0 0 * * *", "2026-01-15T00:00:00Z", []string{"2026-01-16T00:00:00+05:45"}},
		{"CRON_TZ=America/New_York 0 9 * * *", "2026-07-01T12:00:00Z", []string{"2026-07-01T09:00:00-04:00", "2026-07-02T09:00:00-04:00"}},
		{"TZ=Europe/Paris 0 9 * * *", "2026-01-15T00:00:00Z", []string{"2026-01-15T09:00:00+01:00"}},
		{"  CRON_TZ=Europe/Paris   0 9 * * *  ", "2026-07-15T00:00:00Z", []string{"2026-07-15T09:00:00+02:00"}},
	})
}

func TestNextDescriptors(t *testing.T) {
	runNextCases(t, []nextCase{
		{"CRON_TZ=UTC @hourly", "2026-01-15T10:00:00Z", []string{"2026-01-15T11:00:00Z", "2026-01-15T12:00:00Z"}},
		{"CRON_TZ=UTC @daily", "2026-01-15T00:00:00.5Z", []string{"2026-01-16T00:00:00Z"}},
		{"CRON_TZ=UTC @midnight", "2026-01-15T23:59:59Z", []string{"2026-01-16T00:00:00Z"}},
		{"CRON_TZ=UTC @weekly", "2026-01-15T00:00:00Z", []string{"2026-01-18T00:00:00Z", "2026-01-25T00:00:00Z"}},
		{"CRON_TZ=UTC @monthly", "2026-01-31T23:59:59Z", []string{"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}},
		{"CRON_TZ=UTC @yearly", "2026-06-01T00:00:00Z", []string{"2027-01-01T00:00:00Z"}},
		{"CRON_TZ=UTC @annually", "2026-06-01T00:00:00Z", []string{"2027-01-01T00:00:00Z"}},
		{"CRON_TZ=Asia/Tokyo @daily", "2026-01-15T00:00:00Z", []string{"2026-01-16T00:00:00+09:00"}},
	})
}

// TestNextLocalZone pins unprefixed expressions to time.Local: the
// location of the time passed in must not change the answer.
func TestNextLocalZone(t *testing.T) {
	s := mustParse(t, "0 9 * * *")
	after := time.Date(2026, 1, 15, 12, 0, 0, 0, time.Local)
	want := time.Date(2026, 1, 16, 9, 0, 0, 0, time.Local)
	for _, loc := range []*time.Location{time.Local, time.UTC, time.FixedZone("X", 7*3600+45*60)} {
		got := s.Next(after.In(loc))
		if !got.Equal(want) {
			t.Errorf("Next(after in %s) = %s, want %s", loc, fmtTime(got), fmtTime(want))
		}
		if got.Location() != loc {
			t.Errorf("Next(after in %s) returned a time in %s", loc, got.Location())
		}
	}
}

// TestParseErrors: each error names the field or the part at fault and what
// it accepts, and leaves naming the expression to the caller.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{"", []string{"the expression is empty"}},
		{"   ", []string{"the expression is empty"}},
		{"* * *", []string{"has 3 fields", "want 5", "or 6"}},
		{"* * * * * * *", []string{"has 7 fields"}},
		{"0", []string{"has 1 field, want 5"}},
		{"60 * * * *", []string{`minute field "60"`, "above maximum (59)", "minutes are 0-59"}},
		{"0 24 * * *", []string{`hour field "24"`, "hours are 0-23"}},
		{"0 0 0 * *", []string{`day-of-month field "0"`, "below minimum (1)"}},
		{"0 0 1 13 *", []string{`month field "13"`, "jan-dec"}},
		{"0 0 1 foo *", []string{`month field "foo"`}},
		{"0 0 * * 7", []string{`day-of-week field "7"`, "Sunday is 0"}},
		{"0 0 * * mon-funday", []string{`day-of-week field "mon-funday"`}},
		{"61 0 0 * * *", []string{`second field "61"`}},
		{"*/0 * * * *", []string{`minute field "*/0"`, "step"}},
		{"5-1 * * * *", []string{`minute field "5-1"`, "beyond end"}},
		{"1-2-3 * * * *", []string{`minute field "1-2-3"`, "hyphens"}},
		{"0 0 L * *", []string{`day-of-month field "L"`, `"L" is not a number or a name`}},
		{"@reboot", []string{`unknown descriptor "@reboot"`, "@hourly"}},
		{"@daily 5", []string{`unknown descriptor "@daily 5"`}},
		{"@every", []string{"@every needs a duration"}},
		{"@everyday", []string{`unknown descriptor "@everyday"`}},
		{"@every 0s", []string{"at least 1s"}},
		{"@every -5m", []string{"at least 1s"}},
		{"@every 500ms", []string{"at least 1s"}},
		{"@every 1500ms", []string{"whole number of seconds"}},
		{"@every banana", []string{`"banana" is not a duration`}},
		{"CRON_TZ=Mars/Olympus_Mons 0 * * * *", []string{`unknown time zone "Mars/Olympus_Mons"`}},
		{"CRON_TZ= 0 * * * *", []string{"CRON_TZ= names no time zone"}},
		{"TZ= 0 * * * *", []string{"TZ= names no time zone"}},
		{"CRON_TZ=UTC", []string{"not followed by a schedule"}},
		{"CRON_TZ=UTC   ", []string{"not followed by a schedule"}},
		{"CRON_TZ=UTC 0 25 * * *", []string{`hour field "25"`}},
		{"CRON_TZ=UTC CRON_TZ=UTC", []string{"a second CRON_TZ= prefix"}},
		{"CRON_TZ=UTC TZ=Europe/Paris 0 * * * *", []string{"a second TZ= prefix"}},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			s, err := Parse(tc.expr)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tc.expr, s)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if s != nil {
				t.Errorf("Parse(%q) returned a Spec with its error", tc.expr)
			}
		})
	}
}
