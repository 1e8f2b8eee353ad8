package cronspec

import (
	"time"

	"github.com/robfig/cron/v3"
)

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
