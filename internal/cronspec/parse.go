// Package cronspec computes the fire times of cron expressions: the five
// or six fields robfig/cron reads, its descriptors, a CRON_TZ= or TZ= zone
// prefix, and "@every d" counted from the Unix epoch, with agora's daylight
// saving rules and its stricter checks. It is time arithmetic only; the
// runtime's Schedule wraps it.
package cronspec

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	// CRON_TZ zones must resolve even in minimal containers that ship no
	// zoneinfo files; the embedded database is the fallback Go uses then.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// Spec is a parsed expression: the fire times it stands for.
type Spec interface {
	// Next returns the first fire time strictly after after, in after's
	// location, or the zero time when nothing fires within about twenty
	// years.
	Next(after time.Time) time.Time
}

// cronFields parses the five or six time fields of an expression. The zone
// prefix is handled by Parse so that it can be checked strictly.
var cronFields = cron.NewParser(
	cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor,
)

// fieldNames name the six fields, seconds first, for error messages.
var fieldNames = [...]string{"second", "minute", "hour", "day-of-month", "month", "day-of-week"}

// Parse reads an expression. Without a zone prefix its times are in the
// process's local zone (time.Local), whatever the location of the time
// given to Next. Errors describe the problem without the expression, for
// the caller to name it.
func Parse(expr string) (Spec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, errors.New("the expression is empty")
	}
	loc := time.Local
	rest := expr
	if name, ok := ZonePrefix(expr); ok {
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
		if again, ok := ZonePrefix(rest); ok {
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

// ZonePrefix reports the prefix name ("CRON_TZ" or "TZ") when expr starts
// with one, so that a caller adding a zone of its own can refuse a second.
func ZonePrefix(expr string) (string, bool) {
	for _, name := range []string{"CRON_TZ", "TZ"} {
		if strings.HasPrefix(expr, name+"=") {
			return name, true
		}
	}
	return "", false
}

// CheckZone reports whether zone names a time zone an expression's times
// can be read in: an IANA name from Go's zone database (embedded, so
// minimal containers resolve it too), "UTC" or "Local".
func CheckZone(zone string) error {
	if zone == "" || strings.TrimSpace(zone) != zone || strings.ContainsAny(zone, " \t\n") {
		return fmt.Errorf("time zone %q: want an IANA name such as Europe/Berlin (what CRON_TZ= takes)", zone)
	}
	if _, err := time.LoadLocation(zone); err != nil {
		return fmt.Errorf("unknown time zone %q: want an IANA name such as Europe/Berlin (what CRON_TZ= takes)", zone)
	}
	return nil
}
