package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSchedule reads a schedule in the form Schedule.String writes it:
// "every=<Go duration>", `cron="<expr>"`, "continuous" or "once". Fleet
// tooling uses it to compute next fire times from worker records.
func ParseSchedule(s string) (Schedule, error) {
	switch {
	case s == "continuous":
		return Continuous(), nil
	case s == "once":
		return Once(), nil
	case strings.HasPrefix(s, "every="):
		d, err := time.ParseDuration(strings.TrimPrefix(s, "every="))
		if err != nil || d <= 0 {
			return Schedule{}, fmt.Errorf("%w: %q: want every=<positive Go duration>", ErrInvalidSchedule, s)
		}
		return Every(d), nil
	case strings.HasPrefix(s, "cron="):
		expr, err := strconv.Unquote(strings.TrimPrefix(s, "cron="))
		if err != nil {
			return Schedule{}, fmt.Errorf("%w: %q: want cron=\"<expr>\"", ErrInvalidSchedule, s)
		}
		return Cron(expr)
	}
	return Schedule{}, fmt.Errorf("%w: %q: want every=..., cron=\"...\", continuous or once", ErrInvalidSchedule, s)
}
