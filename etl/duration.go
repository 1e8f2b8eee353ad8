package etl

import (
	"fmt"
	"time"
)

// Duration is a time.Duration that configuration files write as a Go
// duration string, such as "500ms" or "2m".
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("etl: %q is not a duration such as \"500ms\" or \"2m\"", text)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// String returns the Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// checkDuration validates a duration key: not negative, and not a bare
// number of nanoseconds where seconds were surely meant.
func checkDuration(key string, d Duration) error {
	switch {
	case d < 0:
		return FieldErrorf(key, "%s is negative", d)
	case d > 0 && time.Duration(d) < time.Millisecond:
		return FieldErrorf(key, "%s is less than a millisecond; write a duration string such as \"5s\"", d)
	}
	return nil
}
