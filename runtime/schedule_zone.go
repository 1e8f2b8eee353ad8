package runtime

import (
	"fmt"
	"strings"

	"github.com/agora-etl/agora/internal/cronspec"
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
	if name, ok := cronspec.ZonePrefix(trimmed); ok {
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
func CheckTimeZone(zone string) error { return cronspec.CheckZone(zone) }
