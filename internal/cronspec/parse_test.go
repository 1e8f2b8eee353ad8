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

// errorCase is an expression Parse refuses and what its error must say.
type errorCase struct {
	expr string
	want []string
}

// checkParseErrors asserts that Parse refuses each expression, returns no
// Spec with the error, and that the error says each of want. Errors leave
// naming the expression to the caller.
func checkParseErrors(t *testing.T, cases []errorCase) {
	t.Helper()
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

// TestParseZoneErrors: the zone prefix is checked strictly, before
// robfig/cron (which panics on some of these) sees the fields.
func TestParseZoneErrors(t *testing.T) {
	checkParseErrors(t, []errorCase{
		{"", []string{"the expression is empty"}},
		{"   ", []string{"the expression is empty"}},
		{"CRON_TZ=Mars/Olympus_Mons 0 * * * *", []string{`unknown time zone "Mars/Olympus_Mons" in CRON_TZ=`}},
		{"CRON_TZ= 0 * * * *", []string{"CRON_TZ= names no time zone"}},
		{"TZ= 0 * * * *", []string{"TZ= names no time zone"}},
		{"CRON_TZ=UTC", []string{"CRON_TZ=UTC is not followed by a schedule"}},
		{"CRON_TZ=UTC   ", []string{"not followed by a schedule"}},
		{"CRON_TZ=UTC 0 25 * * *", []string{`hour field "25"`}},
		{"CRON_TZ=UTC CRON_TZ=UTC", []string{"a second CRON_TZ= prefix; give one time zone"}},
		{"CRON_TZ=UTC TZ=Europe/Paris 0 * * * *", []string{"a second TZ= prefix"}},
	})
}

func TestZonePrefix(t *testing.T) {
	for expr, want := range map[string]string{"CRON_TZ=UTC 0 * * * *": "CRON_TZ", "TZ=UTC @daily": "TZ", "0 * * * *": "", "CRON_TZ 0 * * * *": ""} {
		if got, ok := ZonePrefix(expr); got != want || ok != (want != "") {
			t.Errorf("ZonePrefix(%q) = %q, %v; want %q", expr, got, ok, want)
		}
	}
}

func TestCheckZone(t *testing.T) {
	for _, zone := range []string{"UTC", "Local", "Europe/Berlin", "America/Argentina/Buenos_Aires"} {
		if err := CheckZone(zone); err != nil {
			t.Errorf("CheckZone(%q) = %v", zone, err)
		}
	}
	for zone, want := range map[string]string{
		"":                `time zone "": want an IANA name such as Europe/Berlin (what CRON_TZ= takes)`,
		" UTC":            `time zone " UTC": want an IANA name`,
		"Europe/Berlin x": `time zone "Europe/Berlin x": want an IANA name`,
		"Europe/Berlln":   `unknown time zone "Europe/Berlln": want an IANA name such as Europe/Berlin (what CRON_TZ= takes)`,
	} {
		if err := CheckZone(zone); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("CheckZone(%q) = %v, want %q", zone, err, want)
		}
	}
}
