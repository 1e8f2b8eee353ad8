package runtime

import (
	"fmt"
	"strings"
	"time"
)

// CronIn is Cron with the expression's times read in zone, an IANA time
// zone name such as "Europe/Berlin" (or "UTC", or "Local"): the same as
// writing "CRON_TZ=<zone> <expr>", the form the //agora:schedule timezone=
// key and the agora/v1 schedule key timezone stand for. An unknown zone, and
// an expression that already names a zone with a CRON_TZ= or TZ= prefix, are
// errors.
func CronIn(expr, zone string) (Schedule, error) {
	if err := CheckTimeZone(zone); err != nil {
		return Schedule{}, fmt.Errorf("%w: %w", ErrInvalidSchedule, err)
	}
	trimmed := strings.TrimSpace(expr)
	if name, ok := zonePrefix(trimmed); ok {
		return Schedule{}, fmt.Errorf("%w: cron expression %q: already has a %s= prefix; give the time zone once", ErrInvalidSchedule, expr, name)
	}
	if trimmed == "" {
		return Cron(expr)
	}
	return Cron("CRON_TZ=" + zone + " " + trimmed)
}

// CheckTimeZone reports whether zone names a time zone cron times can be
// read in: an IANA name from Go's zone database (embedded, so minimal
// containers resolve it too), "UTC" or "Local".
func CheckTimeZone(zone string) error {
	if zone == "" || strings.TrimSpace(zone) != zone || strings.ContainsAny(zone, " \t\n") {
		return fmt.Errorf("time zone %q: want an IANA name such as Europe/Berlin (what CRON_TZ= takes)", zone)
	}
	if _, err := time.LoadLocation(zone); err != nil {
		return fmt.Errorf("unknown time zone %q: want an IANA name such as Europe/Berlin (what CRON_TZ= takes)", zone)
	}
	return nil
}
