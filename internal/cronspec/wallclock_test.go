package cronspec

import (
	"fmt"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// New York, 2026-03-08: at 02:00 EST the clocks go forward to 03:00 EDT, so
// local times 02:00-02:59 do not exist.
func TestDSTSpringForwardNewYork(t *testing.T) {
	const ny = "CRON_TZ=America/New_York "
	runNextCases(t, []nextCase{
		// A job in the skipped hour runs once, when the gap ends.
		{ny + "30 2 * * *", "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{ny + "0 30 2 * * *", "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{ny + "0 2 * * *", "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"}},
		// Several skipped times still make one run.
		{ny + "*/20 2 * * *", "2026-03-08T00:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"}},
		// A skipped time and a real time at the end of the gap: one run.
		{ny + "0 2,3 * * *", "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00", "2026-03-09T03:00:00-04:00"}},
		{ny + "0 3 * * *", "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-09T03:00:00-04:00"}},
		// Asking from the instant of the catch-up run moves on.
		{ny + "30 2 * * *", "2026-03-08T03:00:00-04:00", []string{"2026-03-09T02:30:00-04:00"}},
		// Jobs on every hour follow the wall clock: nothing is owed.
		{ny + "*/15 * * * *", "2026-03-08T01:40:00-05:00", []string{"2026-03-08T01:45:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"}},
		{ny + "30 * * * *", "2026-03-08T01:00:00-05:00", []string{"2026-03-08T01:30:00-05:00", "2026-03-08T03:30:00-04:00", "2026-03-08T04:30:00-04:00"}},
		{ny + "@hourly", "2026-03-08T00:30:00-05:00", []string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00"}},
		{ny + "*/30 * * * * *", "2026-03-08T01:59:30-05:00", []string{"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:30-04:00"}},
	})
}

// New York, 2026-11-01: at 02:00 EDT the clocks go back to 01:00 EST, so
// local times 01:00-01:59 happen twice, first at -04:00 and then at -05:00.
func TestDSTFallBackNewYork(t *testing.T) {
	const ny = "CRON_TZ=America/New_York "
	runNextCases(t, []nextCase{
		// A job in the repeated hour runs once, at the first occurrence.
		{ny + "30 1 * * *", "2026-10-31T12:00:00-04:00", []string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{ny + "0 1 * * *", "2026-10-31T12:00:00-04:00", []string{"2026-11-01T01:00:00-04:00", "2026-11-02T01:00:00-05:00"}},
		{ny + "*/20 1 * * *", "2026-11-01T00:50:00-04:00", []string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:20:00-04:00", "2026-11-01T01:40:00-04:00", "2026-11-02T01:00:00-05:00"}},
		// From inside the second 01:xx hour the repeats are not owed.
		{ny + "30 1 * * *", "2026-11-01T01:10:00-05:00", []string{"2026-11-02T01:30:00-05:00"}},
		{ny + "15 1 * * *", "2026-11-01T01:20:00-04:00", []string{"2026-11-02T01:15:00-05:00"}},
		{ny + "45 1 * * *", "2026-11-01T01:20:00-04:00", []string{"2026-11-01T01:45:00-04:00", "2026-11-02T01:45:00-05:00"}},
		{ny + "45 0 * * *", "2026-11-01T01:10:00-05:00", []string{"2026-11-02T00:45:00-05:00"}},
		// 02:00 EDT never shows on the wall; 02:00 EST does.
		{ny + "0 2 * * *", "2026-10-31T12:00:00-04:00", []string{"2026-11-01T02:00:00-05:00", "2026-11-02T02:00:00-05:00"}},
		{ny + "@daily", "2026-10-31T12:00:00-04:00", []string{"2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00"}},
		// Jobs on every hour keep their real-time cadence through both.
		{ny + "0 * * * *", "2026-11-01T00:30:00-04:00", []string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"}},
		{ny + "*/15 * * * *", "2026-11-01T01:40:00-04:00", []string{"2026-11-01T01:45:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T01:15:00-05:00"}},
	})
}

// London: 2026-03-29 01:00 GMT -> 02:00 BST; 2026-10-25 02:00 BST -> 01:00 GMT.
func TestDSTLondon(t *testing.T) {
	const lon = "CRON_TZ=Europe/London "
	runNextCases(t, []nextCase{
		{lon + "30 1 * * *", "2026-03-28T12:00:00Z", []string{"2026-03-29T02:00:00+01:00", "2026-03-30T01:30:00+01:00"}},
		{lon + "30 1 * * *", "2026-10-24T12:00:00+01:00", []string{"2026-10-25T01:30:00+01:00", "2026-10-26T01:30:00Z"}},
		{lon + "@hourly", "2026-10-25T00:30:00+01:00", []string{"2026-10-25T01:00:00+01:00", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
	})
}

// Lord Howe Island moves its clocks by 30 minutes: 2026-04-05 02:00 +11:00 ->
// 01:30 +10:30 and 2026-10-04 02:00 +10:30 -> 02:30 +11:00.
func TestDSTLordHowe(t *testing.T) {
	const lh = "CRON_TZ=Australia/Lord_Howe "
	runNextCases(t, []nextCase{
		{lh + "15 2 * * *", "2026-10-03T12:00:00+10:30", []string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{lh + "45 2 * * *", "2026-10-03T12:00:00+10:30", []string{"2026-10-04T02:45:00+11:00", "2026-10-05T02:45:00+11:00"}},
		{lh + "*/15 * * * *", "2026-10-04T01:40:00+10:30", []string{"2026-10-04T01:45:00+10:30", "2026-10-04T02:30:00+11:00", "2026-10-04T02:45:00+11:00"}},
		{lh + "45 1 * * *", "2026-04-04T12:00:00+11:00", []string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
		{lh + "*/15 * * * *", "2026-04-05T01:40:00+11:00", []string{"2026-04-05T01:45:00+11:00", "2026-04-05T01:30:00+10:30", "2026-04-05T01:45:00+10:30", "2026-04-05T02:00:00+10:30"}},
	})
}

// Santiago changes at midnight: 2026-04-05 00:00 -03 -> 2026-04-04 23:00 -04
// (the last hour of the 4th repeats) and 2026-09-06 00:00 -04 -> 01:00 -03
// (the 6th has no midnight).
func TestDSTMidnightSantiago(t *testing.T) {
	const scl = "CRON_TZ=America/Santiago "
	runNextCases(t, []nextCase{
		{scl + "@daily", "2026-09-05T12:00:00-04:00", []string{"2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"}},
		{scl + "0 0 6 9 *", "2026-01-01T00:00:00Z", []string{"2026-09-06T01:00:00-03:00", "2027-09-06T00:00:00-03:00"}},
		{scl + "30 23 * * *", "2026-04-04T12:00:00-03:00", []string{"2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"}},
		{scl + "@daily", "2026-04-04T12:00:00-03:00", []string{"2026-04-05T00:00:00-04:00", "2026-04-06T00:00:00-04:00"}},
	})
}

// TestCronNextStrictlyIncreasing sweeps a whole year in zones with one-hour,
// half-hour and midnight transitions: Next is always after its argument, and
// nothing fires between an instant and its Next.
func TestNextStrictlyIncreasing(t *testing.T) {
	zones := []string{"America/New_York", "Australia/Lord_Howe", "America/Santiago"}
	exprs := []string{"30 1 * * *", "*/15 * * * *", "0 0-22/2 * * *", "30 2 * * *", "@daily", "*/45 * * * * *"}
	step := 37*time.Minute + 11*time.Second
	if testing.Short() {
		step = 3 * time.Hour
	}
	for _, zone := range zones {
		for _, expr := range exprs {
			full := "CRON_TZ=" + zone + " " + expr
			s := mustParse(t, full)
			from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			to := from.AddDate(1, 0, 0)
			for at := from; at.Before(to); at = at.Add(step) {
				next := s.Next(at)
				if !next.After(at) {
					t.Fatalf("%s: Next(%s) = %s, not after it", full, fmtTime(at), fmtTime(next))
				}
				if again := s.Next(next.Add(-time.Second)); !again.Equal(next) && next.Add(-time.Second).After(at) {
					t.Fatalf("%s: Next(%s) = %s but Next(%s) = %s", full, fmtTime(at), fmtTime(next), fmtTime(next.Add(-time.Second)), fmtTime(again))
				}
			}
		}
	}
}

// TestCronDSTMatchesRules compares Next with a direct statement of the rules,
// minute by minute, for a day either side of every transition of 2026 in
// several zones, and of 2018 in São Paulo, whose clocks then skipped
// midnight.
func TestDSTMatchesRules(t *testing.T) {
	exprs := []string{
		"30 1 * * *", "0 2 * * *", "30 2 * * *", "*/15 * * * *", "0 * * * *", "*/20 1-2 * * *",
		"0 0 * * *", "30 23 * * *", "15,45 0-3 * * *", "* 1 * * *", "0 0-23 * * *", "0 0-22 * * *",
		"0 0 * * 0", "0 12 * * *",
	}
	years := map[string]int{
		"America/New_York": 2026, "Europe/London": 2026, "Australia/Lord_Howe": 2026,
		"America/Santiago": 2026, "America/Havana": 2026, "America/Sao_Paulo": 2018,
	}
	fields := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	for zone, year := range years {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		transitions := transitionsIn(loc, year)
		if len(transitions) < 2 {
			t.Fatalf("%s %d: found %d transitions, want 2", zone, year, len(transitions))
		}
		for _, expr := range exprs {
			parsed, err := fields.Parse(expr)
			if err != nil {
				t.Fatal(err)
			}
			spec := parsed.(*cron.SpecSchedule)
			s := mustParse(t, "CRON_TZ="+zone+" "+expr)
			for _, tr := range transitions {
				from, to := tr.Add(-26*time.Hour), tr.Add(26*time.Hour)
				var want []time.Time
				for at := from.Add(time.Minute); !at.After(to); at = at.Add(time.Minute) {
					if ruleFires(spec, loc, at) {
						want = append(want, at)
					}
				}
				var got []time.Time
				for at := s.Next(from); !at.After(to); at = s.Next(at) {
					got = append(got, at)
				}
				if d := diffTimes(got, want, loc); d != "" {
					t.Errorf("%s %q around %s:\n%s", zone, expr, tr.In(loc), d)
				}
			}
		}
	}
}

// TestCronNextFarFuture covers the last day of leap year 2040, where
// time.Time.ZoneBounds reports a zone period ending before the instant asked
// about (golang/go#81583): Next must neither stall there nor lose a run.
func TestNextFarFuture(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fields := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
		for _, zone := range []string{"America/New_York", "Europe/Warsaw", "Australia/Lord_Howe"} {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Error(err)
				return
			}
			for _, expr := range []string{"30 2 * * *", "0 * * * *", "*/20 0-5 * * *"} {
				parsed, _ := fields.Parse(expr)
				spec := parsed.(*cron.SpecSchedule)
				s, err := Parse("CRON_TZ=" + zone + " " + expr)
				if err != nil {
					t.Error(err)
					return
				}
				from := time.Date(2040, 12, 29, 0, 0, 0, 0, time.UTC)
				to := time.Date(2041, 1, 3, 0, 0, 0, 0, time.UTC)
				var want, got []time.Time
				for at := from.Add(time.Minute); !at.After(to); at = at.Add(time.Minute) {
					if ruleFires(spec, loc, at) {
						want = append(want, at)
					}
				}
				for at := s.Next(from); !at.After(to); at = s.Next(at) {
					got = append(got, at)
				}
				if d := diffTimes(got, want, loc); d != "" {
					t.Errorf("%s %q at the end of 2040:\n%s", zone, expr, d)
				}
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Next made no progress at the end of 2040")
	}
}

// ruleFires states the schedule rules directly: a matching local time fires
// at its first occurrence (at every occurrence when the hour field is every
// hour), and the end of a forward jump fires when a matching local time was
// skipped (unless the hour field is every hour).
func ruleFires(spec *cron.SpecSchedule, loc *time.Location, at time.Time) bool {
	everyHour := spec.Hour&(1<<24-1) == 1<<24-1
	local := at.In(loc)
	wall := wallOf(local)
	if matchesWall(spec, wall) {
		if everyHour {
			return true
		}
		repeat := false
		for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
			if wallOf(at.Add(-back).In(loc)).Equal(wall) {
				repeat = true
			}
		}
		if !repeat {
			return true
		}
	}
	_, before := at.Add(-time.Second).In(loc).Zone()
	_, now := local.Zone()
	if everyHour || now <= before {
		return false
	}
	for skipped := wall.Add(-time.Duration(now-before) * time.Second); skipped.Before(wall); skipped = skipped.Add(time.Minute) {
		if matchesWall(spec, skipped) {
			return true
		}
	}
	return false
}

// wallOf returns the wall-clock reading of t as a UTC time.
func wallOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

func matchesWall(s *cron.SpecSchedule, w time.Time) bool {
	const star = 1 << 63
	has := func(bits uint64, v int) bool { return bits&(1<<uint(v)) != 0 }
	if !has(s.Second, w.Second()) || !has(s.Minute, w.Minute()) || !has(s.Hour, w.Hour()) || !has(s.Month, int(w.Month())) {
		return false
	}
	dom, dow := has(s.Dom, w.Day()), has(s.Dow, int(w.Weekday()))
	if s.Dom&star != 0 || s.Dow&star != 0 {
		return dom && dow
	}
	return dom || dow
}

func transitionsIn(loc *time.Location, year int) []time.Time {
	var out []time.Time
	at := time.Date(year, 1, 1, 0, 0, 0, 0, loc)
	limit := time.Date(year+1, 1, 1, 0, 0, 0, 0, loc)
	for {
		_, end := at.ZoneBounds()
		if end.IsZero() || !end.Before(limit) {
			return out
		}
		out = append(out, end)
		at = end
	}
}

func diffTimes(got, want []time.Time, loc *time.Location) string {
	show := func(ts []time.Time) string {
		s := ""
		for _, t := range ts {
			s += " " + t.In(loc).Format("01-02T15:04-07:00")
		}
		return s
	}
	if len(got) == len(want) {
		same := true
		for i := range got {
			if !got[i].Equal(want[i]) {
				same = false
			}
		}
		if same {
			return ""
		}
	}
	return fmt.Sprintf("  got: %s\n want: %s", show(got), show(want))
}

func BenchmarkNext(b *testing.B) {
	for _, expr := range []string{
		"0 * * * *",
		"* * * * * *",
		"CRON_TZ=America/New_York */15 * * * *",
		"CRON_TZ=America/New_York 30 2 * * *",
		"@every 5m",
	} {
		s := mustParse(b, expr)
		b.Run(expr, func(b *testing.B) {
			start := time.Date(2026, 6, 15, 10, 20, 30, 0, time.UTC)
			at := start
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%1024 == 0 {
					at = start
				}
				at = s.Next(at)
			}
		})
	}
}

// BenchmarkRobfigNext is the baseline: robfig/cron's own Next on the same
// expressions, without agora's daylight saving rules.
func BenchmarkRobfigNext(b *testing.B) {
	p := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	for _, expr := range []string{
		"0 * * * *",
		"* * * * * *",
		"CRON_TZ=America/New_York */15 * * * *",
		"CRON_TZ=America/New_York 30 2 * * *",
		"@every 5m",
	} {
		s, err := p.Parse(expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(expr, func(b *testing.B) {
			start := time.Date(2026, 6, 15, 10, 20, 30, 0, time.UTC)
			at := start
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%1024 == 0 {
					at = start
				}
				at = s.Next(at)
			}
		})
	}
}
