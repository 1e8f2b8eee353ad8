package runtime

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	// CRON_TZ zones must resolve even in minimal containers that ship no
	// zoneinfo files; the embedded database is the fallback Go uses then.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// cronFields parses the five or six time fields of an expression. The zone
// prefix is handled by parseCron so that it can be checked strictly.
var cronFields = cron.NewParser(
	cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor,
)

// fieldNames name the six fields, seconds first, for error messages.
var fieldNames = [...]string{"second", "minute", "hour", "day-of-month", "month", "day-of-week"}

// parseCron turns a trimmed, non-empty expression into the function that
// computes its fire times. Errors describe the problem without the
// expression; Cron adds it.
func parseCron(expr string) (nexter, error) {
	loc := time.Local
	rest := expr
	if name, ok := zonePrefix(expr); ok {
		i := strings.IndexFunc(expr, unicode.IsSpace)
		if i < 0 {
			return nil, fmt.Errorf("%s is not followed by a schedule", expr)
		}
		zone := expr[len(name)+1 : i]
		if zone == "" {
			return nil, fmt.Errorf("%s= names no time zone", name)
		}
		l, err := time.LoadLocation(zone)
		if err != nil {
			return nil, fmt.Errorf("unknown time zone %q in %s=", zone, name)
		}
		loc = l
		rest = strings.TrimSpace(expr[i:])
		if again, ok := zonePrefix(rest); ok {
			// robfig/cron would read it, and panics on "CRON_TZ=UTC CRON_TZ=UTC".
			return nil, fmt.Errorf("a second %s= prefix; give one time zone", again)
		}
	}

	if strings.HasPrefix(rest, "@every") {
		return parseEvery(rest)
	}
	spec, err := cronFields.Parse(rest)
	if err != nil {
		return nil, describeCronError(rest, err)
	}
	if err := checkSteps(rest); err != nil {
		return nil, err
	}
	s, ok := spec.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("unsupported schedule type %T", spec)
	}
	w := newWallClock(s, loc)
	if err := checkFires(w); err != nil {
		return nil, err
	}
	return w, nil
}

// zonePrefix reports the prefix name ("CRON_TZ" or "TZ") when expr starts
// with one.
func zonePrefix(expr string) (string, bool) {
	for _, name := range []string{"CRON_TZ", "TZ"} {
		if strings.HasPrefix(expr, name+"=") {
			return name, true
		}
	}
	return "", false
}

// parseEvery accepts "@every d" for a whole number of seconds d ≥ 1s.
// robfig/cron silently rounds anything else, which would give a fleet a
// different interval than the one written.
func parseEvery(rest string) (nexter, error) {
	arg := strings.TrimSpace(strings.TrimPrefix(rest, "@every"))
	if arg == "" || arg == rest {
		return nil, fmt.Errorf("@every needs a duration such as @every 5m")
	}
	if rest[len("@every")] != ' ' && rest[len("@every")] != '\t' {
		return nil, fmt.Errorf("unknown descriptor %q", strings.Fields(rest)[0])
	}
	d, err := time.ParseDuration(arg)
	if err != nil {
		return nil, fmt.Errorf("@every: %q is not a duration (write it like 90s, 5m or 1h30m)", arg)
	}
	if d < time.Second {
		return nil, fmt.Errorf("@every %s: the interval must be at least 1s", arg)
	}
	if d%time.Second != 0 {
		return nil, fmt.Errorf("@every %s: the interval must be a whole number of seconds", arg)
	}
	return epochAlignedDelay{delay: d}, nil
}

// describeCronError rewrites a robfig/cron error so that it names the field
// at fault and what the field accepts.
func describeCronError(rest string, err error) error {
	if strings.HasPrefix(rest, "@") {
		return fmt.Errorf("unknown descriptor %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>)", rest)
	}
	fields := strings.Fields(rest)
	if len(fields) < 5 || len(fields) > 6 {
		noun := "fields"
		if len(fields) == 1 {
			noun = "field"
		}
		return fmt.Errorf("has %d %s, want 5 (minute hour day-of-month month day-of-week) or 6 (a leading seconds field, then those five)", len(fields), noun)
	}
	offset := 6 - len(fields)
	for i, f := range fields {
		probe := make([]string, len(fields))
		for j := range probe {
			probe[j] = "*"
		}
		probe[i] = f
		if _, ferr := cronFields.Parse(strings.Join(probe, " ")); ferr != nil {
			name := fieldNames[i+offset]
			return fmt.Errorf("%s field %q: %s (%s)", name, f, fieldProblem(ferr), fieldHint(name))
		}
	}
	return err
}

// fieldProblem shortens robfig/cron's number error, which otherwise carries
// a strconv message meant for programmers.
func fieldProblem(err error) string {
	msg := err.Error()
	const notInt = "failed to parse int from "
	if rest, ok := strings.CutPrefix(msg, notInt); ok {
		if token, _, found := strings.Cut(rest, ": "); found {
			return fmt.Sprintf("%q is not a number or a name", token)
		}
	}
	return msg
}

func fieldHint(name string) string {
	switch name {
	case "second", "minute":
		return name + "s are 0-59"
	case "hour":
		return "hours are 0-23"
	case "day-of-month":
		return "days of the month are 1-31"
	case "month":
		return "months are 1-12 or jan-dec"
	default:
		return "days of the week are 0-6 or sun-sat, Sunday is 0"
	}
}

// nexter is the part of cron.Schedule agora uses.
type nexter interface {
	Next(after time.Time) time.Time
}

// hourMask has a bit for each of the 24 hours.
const hourMask = 1<<24 - 1

// wallClock evaluates a cron field set in a zone with agora's daylight saving
// rules, which robfig/cron does not apply (it skips a job whose local time
// falls in a skipped hour and runs a job twice in a repeated hour):
//
//   - A matching local time that does not exist because the clocks went
//     forward fires once, at the instant the gap ends, unless the hour field
//     covers every hour: then the wall clock decides and nothing is owed.
//   - A matching local time that happens twice because the clocks went back
//     fires at its first occurrence only, unless the hour field covers every
//     hour: then it fires at both, keeping the real-time cadence of "every
//     15 minutes" or "hourly" jobs.
//
// These are the rules of Vixie cron and its descendants.
type wallClock struct {
	fields    *cron.SpecSchedule // in UTC: finds matching local times free of DST
	loc       *time.Location
	everyHour bool
}

func newWallClock(s *cron.SpecSchedule, loc *time.Location) wallClock {
	fields := *s
	fields.Location = time.UTC
	return wallClock{fields: &fields, loc: loc, everyHour: s.Hour&hourMask == hourMask}
}

// maxShift bounds how far a zone's offset can move at one transition. Real
// shifts are at most a day (the date line moves of 1867 and 2011).
const maxShift = 48 * time.Hour

// Next returns the first fire time strictly after after, in after's location,
// or the zero time when nothing fires within about twenty years.
//
// Local times are carried as UTC times with the same fields ("civil" times),
// so robfig/cron's field search runs where no hour is skipped or repeated;
// each offset period of the zone then maps civil times to instants one to one.
func (w wallClock) Next(after time.Time) time.Time {
	t := after.In(w.loc)
	_, off := t.Zone()
	from := civil(t.Unix(), off)
	for {
		start, end := zoneBounds(t, off)
		cand := w.civilNext(from)
		if cand.IsZero() {
			return time.Time{}
		}
		if end.IsZero() || cand.Unix()-int64(off) < end.Unix() {
			if !w.everyHour && !start.IsZero() {
				if firstEnd, repeated := w.repeatedUntil(start, off, cand); repeated {
					// Already fired at its first occurrence: skip the
					// rest of the repeated local times in one step.
					from = firstEnd.Add(-time.Second)
					continue
				}
			}
			return time.Unix(cand.Unix()-int64(off), 0).In(after.Location())
		}
		next := end.In(w.loc)
		_, nextOff := next.Zone()
		if !w.everyHour && nextOff > off && cand.Unix() < end.Unix()+int64(nextOff) {
			// cand is a local time skipped by the jump forward.
			return end.In(after.Location())
		}
		t, off = next, nextOff
		from = civil(end.Unix()-1, off)
	}
}

// civilNext returns the first matching local time after from, carried in
// UTC. robfig/cron gives up after five years, which a leap-day job crossing
// a century (2096-02-29, then 2104-02-29) would hit; the search goes on
// from where it stopped, for about twenty years in all.
func (w wallClock) civilNext(from time.Time) time.Time {
	for range 4 {
		if next := w.fields.Next(from); !next.IsZero() {
			return next
		}
		from = time.Date(from.Year()+5, time.January, 1, 0, 0, 0, 0, time.UTC).Add(-time.Second)
	}
	return time.Time{}
}

// zoneBounds returns t.ZoneBounds(), except that the end is always after t.
// ZoneBounds can report an end before t on the last day of a leap year that
// the zone's TZ rule footer serves, such as 2040 in most zones
// (golang/go#81583); trusting it would stop Next from making progress. The
// end is then found by probing: no zone changes its offset twice within an
// hour, so a change within the next hour is searched to the second and,
// without one, the hour mark serves as an end with the same offset.
func zoneBounds(t time.Time, off int) (start, end time.Time) {
	start, end = t.ZoneBounds()
	if end.IsZero() || end.After(t) {
		return start, end
	}
	lo := t.Unix()
	hi := lo + 3600
	if offsetAt(hi, t.Location()) == off {
		return start, time.Unix(hi, 0).In(t.Location())
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if offsetAt(mid, t.Location()) == off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return start, time.Unix(hi, 0).In(t.Location())
}

func offsetAt(sec int64, loc *time.Location) int {
	_, off := time.Unix(sec, 0).In(loc).Zone()
	return off
}

// repeatedUntil reports whether the civil time cand, taken in the offset
// period that began at start with offset off, already happened in the
// previous period; if so it returns the civil time at which the repeated
// local times end.
func (w wallClock) repeatedUntil(start time.Time, off int, cand time.Time) (time.Time, bool) {
	if cand.Unix()-int64(off)-start.Unix() >= int64(maxShift/time.Second) {
		return time.Time{}, false
	}
	_, prevOff := start.Add(-time.Nanosecond).In(w.loc).Zone()
	if prevOff <= off {
		return time.Time{}, false
	}
	firstEnd := civil(start.Unix(), prevOff)
	return firstEnd, cand.Before(firstEnd)
}

// civil returns the local time of the Unix second sec at offset off, carried
// in UTC.
func civil(sec int64, off int) time.Time {
	return time.Unix(sec+int64(off), 0).UTC()
}

// epochAlignedDelay fires at whole multiples of delay since the Unix epoch,
// so that replicas started at different moments agree on the fire times.
type epochAlignedDelay struct{ delay time.Duration }

func (e epochAlignedDelay) Next(after time.Time) time.Time {
	// Whole seconds keep the arithmetic clear of int64 nanosecond overflow.
	d := int64(e.delay / time.Second)
	sec := after.Unix()
	rem := sec % d
	if rem < 0 {
		rem += d
	}
	return time.Unix(sec-rem+d, 0).In(after.Location())
}
