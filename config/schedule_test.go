package config

import (
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func parseSchedule(t *testing.T, table string) (Schedule, Diagnostics) {
	t.Helper()
	var s Schedule
	ds := check(t, "[s]\n"+table, func(d *decoder, m map[string]any) {
		s = d.schedule(m["s"].(map[string]any), path{"s"})
	})
	return s, ds
}

func TestScheduleModes(t *testing.T) {
	for _, tc := range []struct {
		table string
		kind  runtime.ScheduleKind
		every time.Duration
		desc  string
	}{
		{"mode = \"every\"\nminutes = 15", runtime.ScheduleEvery, 15 * time.Minute, "every 15m"},
		{"mode = \"every\"\ndays = 1\nhours = 2\nminutes = 3\nseconds = 4", runtime.ScheduleEvery, 26*time.Hour + 3*time.Minute + 4*time.Second, "every 26h3m4s"},
		{"mode = \"every\"\nhours = 0.5", runtime.ScheduleEvery, 30 * time.Minute, "every 30m"},
		{"mode = \"every\"\nseconds = 0.25", runtime.ScheduleEvery, 250 * time.Millisecond, "every 250ms"},
		{"mode = \"cron\"\nexpr = \"0 * * * *\"", runtime.ScheduleCron, 0, `cron "0 * * * *"`},
		{"mode = \"cron\"\nexpr = \"@every 10s\"\ncatch_up = \"all\"\ngrace = 5", runtime.ScheduleCron, 0, `cron "@every 10s", catch_up all, grace 5s`},
		{"mode = \"cron\"\nexpr = \"30 2 * * *\"\ntimezone = \"Europe/Berlin\"", runtime.ScheduleCron, 0, `cron "30 2 * * *", timezone Europe/Berlin`},
		{"mode = \"continuous\"", runtime.ScheduleContinuous, 0, "continuous"},
		{"mode = \"once\"", runtime.ScheduleOnce, 0, "once"},
	} {
		s, ds := parseSchedule(t, tc.table)
		if len(ds) > 0 {
			t.Errorf("%q: %v", tc.table, ds)
			continue
		}
		if s.Runtime().Kind() != tc.kind || s.Every != tc.every || s.describe() != tc.desc {
			t.Errorf("%q: kind %s, every %s, describe %q; want %s, %s, %q", tc.table, s.Runtime().Kind(), s.Every, s.describe(), tc.kind, tc.every, tc.desc)
		}
		if s.String() != s.Runtime().String() {
			t.Errorf("String() = %q, want the runtime's %q", s.String(), s.Runtime().String())
		}
	}
}

func TestScheduleProblems(t *testing.T) {
	for _, tc := range []struct{ table, want string }{
		{"minutes = 1", "t.toml:1:2: s: mode is missing"},
		{"mode = 1", "t.toml:2:8: s.mode: want a string, got an integer"},
		{"mode = \"cronn\"\nexpr = \"x\"", "t.toml:2:8: s.mode: unknown mode \"cronn\" (did you mean \"cron\"?)"},
		{"mode = \"every\"", "t.toml:2:1: s: mode = \"every\" needs an interval"},
		{"mode = \"every\"\nminutes = 0", "t.toml:2:1: s: the interval is zero"},
		{"mode = \"every\"\nseconds = 0.0000000001", "t.toml:2:1: s: the interval is zero"},
		{"mode = \"every\"\ndays = 1e300", "t.toml:2:1: s: the interval is too long"},
		{"mode = \"every\"\nminutes = \"5\"", "t.toml:3:11: s.minutes: want a number, got a string"},
		{"mode = \"cron\"\nexpr = \"* * *\"", "t.toml:3:8: s.expr: cron expression \"* * *\""},
		{"mode = \"cron\"\nexpr = \"0 0 30 2 *\"", "t.toml:3:8: s.expr: cron expression \"0 0 30 2 *\": never fires"},
		{"mode = \"cron\"\nexpr = \"*/61 * * * *\"", "t.toml:3:8: s.expr: cron expression \"*/61 * * * *\": minute field \"*/61\": step /61 is beyond"},
		{"mode = \"cron\"\nexpr = \"0 * * * *\"\ntimezone = \"Europe/Berlln\"", "t.toml:4:12: s.timezone: unknown time zone \"Europe/Berlln\": want an IANA name such as Europe/Berlin (what CRON_TZ= takes)"},
		{"mode = \"cron\"\nexpr = \"CRON_TZ=UTC 0 * * * *\"\ntimezone = \"Europe/Berlin\"", "t.toml:3:8: s.expr: cron expression \"CRON_TZ=UTC 0 * * * *\": already has a CRON_TZ= prefix"},
		{"mode = \"every\"\nminutes = 1\ntimezone = \"UTC\"", "t.toml:4:1: s.timezone: not used with mode = \"every\""},
		{"mode = \"cron\"\nexpr = 5", "t.toml:3:8: s.expr: want a string, got an integer"},
		{"mode = \"cron\"\nexpr = \"0 * * * *\"\ncatch_up = \"lates\"", "t.toml:4:12: s.catch_up: unknown policy \"lates\" (did you mean \"latest\"?)"},
		{"mode = \"cron\"\nexpr = \"0 * * * *\"\ngrace = 0", "t.toml:4:9: s.grace: 0s must be positive"},
		{"mode = \"once\"\nexpr = \"0 * * * *\"", "t.toml:3:1: s.expr: not used with mode = \"once\" (it takes no other keys)"},
		{"mode = \"every\"\nminutes = 1\ngrace = \"1m\"", "t.toml:4:1: s.grace: not used with mode = \"every\" (it takes seconds, minutes, hours, days, rerun_interrupted)"},
		// A key two modes take is listed once.
		{"cron = \"* * * * *\"\nmode = \"cron\"\nexpr = \"* * * * *\"", "t.toml:2:1: s: unknown key \"cron\"; known keys: catch_up, days, expr, grace, hours, minutes, mode, rerun_interrupted, seconds, timezone"},
	} {
		_, ds := parseSchedule(t, tc.table)
		if len(ds) != 1 || !strings.HasPrefix(ds[0].String(), tc.want) {
			t.Errorf("%q: diagnostics\n%v\nwant one starting %q", tc.table, ds, tc.want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Second: "1m30s", time.Hour + time.Second: "1h0m1s", 0: "0s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
