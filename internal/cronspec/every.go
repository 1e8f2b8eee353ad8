package cronspec

import (
	"fmt"
	"strings"
	"time"
)

// parseEvery accepts "@every d" for a whole number of seconds d ≥ 1s.
// robfig/cron silently rounds anything else, which would give a fleet a
// different interval than the one written.
func parseEvery(rest string) (Spec, error) {
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
