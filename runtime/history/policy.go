package history

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Policy bounds the run history kept per pipeline: a history serves
// operators looking at recent runs, so it is bounded both by count and by
// age, and can be turned off for the fewest commands per run.
type Policy struct {
	// Off keeps no history at all.
	Off bool
	// Limit is how many runs are kept (default DefaultLimit).
	Limit int
	// MaxAge is how long a run is kept (default DefaultMaxAge).
	MaxAge time.Duration
}

// Defaults of Policy: about a day of hourly runs and more than a week of
// daily ones, in a few hundred bytes per pipeline.
const (
	DefaultLimit  = 100
	DefaultMaxAge = 7 * 24 * time.Hour
)

// WithDefaults returns p with zero fields set to the defaults, so that a
// Policy{} means the defaults everywhere.
func (p Policy) WithDefaults() Policy {
	if p.Limit <= 0 {
		p.Limit = DefaultLimit
	}
	if p.MaxAge <= 0 {
		p.MaxAge = DefaultMaxAge
	}
	return p
}

// String formats p as Parse reads it, so that a setting can be logged and
// read back.
func (p Policy) String() string {
	if p.Off {
		return "off"
	}
	p = p.WithDefaults()
	return strconv.Itoa(p.Limit) + "," + p.MaxAge.String()
}

// ErrBadPolicy is wrapped by Parse's errors, so that a caller can tell a
// bad setting from its own failures.
var ErrBadPolicy = errors.New("history: bad run history setting")

// Parse reads a run history setting: "off" (or "0") keeps none; "<runs>"
// keeps that many runs for the default 7 days; "<runs>,<max age>"
// ("100,168h", "500,24h") sets both; "" is the default, "100,168h".
func Parse(s string) (Policy, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return Policy{}.WithDefaults(), nil
	case "off", "0", "false", "none":
		return Policy{Off: true}, nil
	}
	runs, age, hasAge := strings.Cut(s, ",")
	n, err := strconv.Atoi(strings.TrimSpace(runs))
	if err != nil || n < 0 {
		return Policy{}, fmt.Errorf("%w: %q: the number of runs must be a whole number such as 100 (format: RUNS[,MAX_AGE], e.g. 100,168h; or off)", ErrBadPolicy, s)
	}
	if n == 0 {
		return Policy{Off: true}, nil
	}
	p := Policy{Limit: n}
	if hasAge {
		d, err := time.ParseDuration(strings.TrimSpace(age))
		if err != nil || d <= 0 {
			return Policy{}, fmt.Errorf("%w: %q: the maximum age must be a positive Go duration such as 168h (format: RUNS[,MAX_AGE])", ErrBadPolicy, s)
		}
		p.MaxAge = d
	}
	return p.WithDefaults(), nil
}
