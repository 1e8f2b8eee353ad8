package runtime_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
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
			s, err := runtime.Cron(tc.expr)
			if err != nil {
				t.Fatalf("Cron(%q): %v", tc.expr, err)
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

// TestCronNext: a cron schedule's Next is its expression's fire times,
// read in the zone of its prefix, in time.Local without one, and from the
// expression with the spaces around it trimmed (internal/cronspec has the
// tables of fields, descriptors and daylight saving days).
func TestCronNext(t *testing.T) {
	runNextCases(t, []nextCase{
		{"CRON_TZ=UTC */15 9-17 * * 1-5", "2026-01-16T17:50:00Z", []string{"2026-01-19T09:00:00Z", "2026-01-19T09:15:00Z"}},
		{"  CRON_TZ=Europe/Paris   0 9 * * *  ", "2026-07-15T00:00:00Z", []string{"2026-07-15T09:00:00+02:00"}},
		{"CRON_TZ=America/New_York 30 2 * * *", "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"@every 7m", "2026-01-15T10:00:00Z", []string{"2026-01-15T10:02:00Z", "2026-01-15T10:09:00Z"}},
	})
	s := runtime.MustCron("0 9 * * *")
	after := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	if got, want := s.Next(after), time.Date(2026, 1, 16, 9, 0, 0, 0, time.Local); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Next(%s) = %s, want %s in UTC", fmtTime(after), fmtTime(got), fmtTime(want))
	}
}

// TestCronErrors: every error wraps ErrInvalidSchedule and quotes the
// expression as written, whatever part of it is at fault (internal/cronspec
// has the table of what each says).
func TestCronErrors(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{"", []string{"is empty"}},
		{"   ", []string{"is empty"}},
		{"* * *", []string{"has 3 fields", "want 5", "or 6"}},
		{"60 * * * *", []string{`minute field "60"`, "above maximum (59)", "minutes are 0-59"}},
		{"*/61 * * * *", []string{`minute field "*/61": step /61 is beyond the field's range 0-59`}},
		{"0 0 30 2 *", []string{"never fires"}},
		{"@reboot", []string{`unknown descriptor "@reboot"`, "@hourly"}},
		{"@every 1500ms", []string{"whole number of seconds"}},
		{"CRON_TZ=Mars/Olympus_Mons 0 * * * *", []string{`unknown time zone "Mars/Olympus_Mons"`}},
		{"CRON_TZ=UTC CRON_TZ=UTC", []string{"a second CRON_TZ= prefix"}},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			s, err := runtime.Cron(tc.expr)
			if err == nil {
				t.Fatalf("Cron(%q) = %v, want an error", tc.expr, s)
			}
			if !errors.Is(err, runtime.ErrInvalidSchedule) {
				t.Errorf("error %q does not wrap ErrInvalidSchedule", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, `cron expression "`+tc.expr+`"`) {
				t.Errorf("error %q does not quote the expression %q", msg, tc.expr)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if !s.IsZero() {
				t.Errorf("Cron(%q) returned a non-zero schedule with its error", tc.expr)
			}
		})
	}
}

func TestMustCron(t *testing.T) {
	if s := runtime.MustCron("0 * * * *"); s.Kind() != runtime.ScheduleCron {
		t.Fatalf("MustCron kind = %v", s.Kind())
	}
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, runtime.ErrInvalidSchedule) || !strings.Contains(err.Error(), `"0 61 * * *"`) {
			t.Fatalf("MustCron panicked with %v, want an ErrInvalidSchedule quoting the expression", r)
		}
	}()
	runtime.MustCron("0 61 * * *")
	t.Fatal("MustCron did not panic on a bad expression")
}

func TestScheduleDescribe(t *testing.T) {
	cases := []struct {
		s        runtime.Schedule
		kind     runtime.ScheduleKind
		kindName string
		str      string
		interval time.Duration
		expr     string
		zero     bool
	}{
		{runtime.Every(90 * time.Minute), runtime.ScheduleEvery, "every", "every=1h30m0s", 90 * time.Minute, "", false},
		{runtime.MustCron(" 0 * * * * "), runtime.ScheduleCron, "cron", `cron="0 * * * *"`, 0, "0 * * * *", false},
		{runtime.MustCron("CRON_TZ=Europe/Paris @daily"), runtime.ScheduleCron, "cron", `cron="CRON_TZ=Europe/Paris @daily"`, 0, "CRON_TZ=Europe/Paris @daily", false},
		{runtime.Continuous(), runtime.ScheduleContinuous, "continuous", "continuous", 0, "", false},
		{runtime.Once(), runtime.ScheduleOnce, "once", "once", 0, "", false},
		{runtime.Schedule{}, runtime.ScheduleNone, "none", "none", 0, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.str, func(t *testing.T) {
			if got := tc.s.Kind(); got != tc.kind {
				t.Errorf("Kind() = %v, want %v", got, tc.kind)
			}
			if got := tc.s.Kind().String(); got != tc.kindName {
				t.Errorf("Kind().String() = %q, want %q", got, tc.kindName)
			}
			if got := tc.s.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
			if got := tc.s.Interval(); got != tc.interval {
				t.Errorf("Interval() = %v, want %v", got, tc.interval)
			}
			if got := tc.s.Expr(); got != tc.expr {
				t.Errorf("Expr() = %q, want %q", got, tc.expr)
			}
			if got := tc.s.IsZero(); got != tc.zero {
				t.Errorf("IsZero() = %v, want %v", got, tc.zero)
			}
		})
	}
}

func TestScheduleValidate(t *testing.T) {
	valid := []runtime.Schedule{
		runtime.Every(time.Nanosecond), runtime.Every(time.Hour), runtime.MustCron("@every 1s"),
		runtime.MustCron("*/5 * * * *"), runtime.Continuous(), runtime.Once(),
	}
	for _, s := range valid {
		if err := s.Validate(); err != nil {
			t.Errorf("%s.Validate() = %v, want nil", s, err)
		}
	}
	invalid := []struct {
		s    runtime.Schedule
		want string
	}{
		{runtime.Schedule{}, "no schedule set"},
		{runtime.Every(0), "every=0s must be positive"},
		{runtime.Every(-time.Minute), "every=-1m0s must be positive"},
	}
	for _, tc := range invalid {
		err := tc.s.Validate()
		if err == nil || !errors.Is(err, runtime.ErrInvalidSchedule) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s.Validate() = %v, want an ErrInvalidSchedule saying %q", tc.s, err, tc.want)
		}
	}
}

func TestScheduleNextOtherKinds(t *testing.T) {
	start := instant(t, "2026-01-15T10:00:00Z")
	finished := start.Add(45 * time.Minute)

	// Every counts from the end of the run: a 45-minute run with Every(1h)
	// starts again 1h45m after it started.
	every := runtime.Every(time.Hour)
	if got, want := every.Next(finished), instant(t, "2026-01-15T11:45:00Z"); !got.Equal(want) {
		t.Errorf("Every(1h).Next(%s) = %s, want %s", finished, got, want)
	}
	if got := every.Next(finished).Sub(start); got != time.Hour+45*time.Minute {
		t.Errorf("start-to-start period = %s, want 1h45m", got)
	}
	for _, s := range []runtime.Schedule{runtime.Continuous(), runtime.Once()} {
		if got := s.Next(finished); !got.Equal(finished) {
			t.Errorf("%s.Next(%s) = %s, want the same instant", s, finished, got)
		}
	}
	if got := (runtime.Schedule{}).Next(finished); !got.IsZero() {
		t.Errorf("zero Schedule Next = %s, want the zero time", got)
	}
}

// FuzzCron checks that no input makes Cron panic (robfig/cron itself panics
// on "CRON_TZ=UTC"), that every error is an ErrInvalidSchedule quoting the
// input, and that a parsed schedule's Next moves strictly forward.
func FuzzCron(f *testing.F) {
	for _, seed := range []string{
		"0 * * * *", "*/10 * * * * *", "@every 5m", "@daily", "CRON_TZ=UTC", "CRON_TZ=", "TZ=",
		"CRON_TZ=America/New_York 30 2 * * *", "0 0 30 2 *", "1-2-3 * * * *", "*/0 * * * *",
		"@every", "@every 1500ms", "0 0 * * 7", "CRON_TZ=Australia/Lord_Howe */15 * * * *",
		"CRON_TZ=UTC CRON_TZ=UTC", "TZ=UTC @every 1h",
	} {
		f.Add(seed, int64(1_772_953_200))
	}
	f.Fuzz(func(t *testing.T, expr string, unix int64) {
		s, err := runtime.Cron(expr)
		if err != nil {
			if !errors.Is(err, runtime.ErrInvalidSchedule) || !strings.Contains(err.Error(), fmt.Sprintf("%q", expr)) {
				t.Fatalf("Cron(%q) error %q does not wrap ErrInvalidSchedule and quote the input", expr, err)
			}
			return
		}
		// Keep instants within years Go and the zone rules handle well.
		at := time.Unix(unix%(200*365*86400), 0).UTC()
		if next := s.Next(at); !next.IsZero() && !next.After(at) {
			t.Fatalf("Cron(%q).Next(%s) = %s, not after it", expr, at, next)
		}
	})
}
