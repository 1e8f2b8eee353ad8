// Package reltime reads the times operators type: an RFC 3339 time, or a
// duration relative to now, as fleet pause --until, fleet backfill --from
// and --to, and the dashboard's forms take them.
package reltime

import (
	"fmt"
	"time"
)

// Parse reads s as an RFC 3339 time (2026-01-02T15:04:05Z) or as a Go
// duration added to now (-24h: a day ago; 2h: in two hours). The error
// names what it read and what it wants; it says nothing of a flag, which
// the caller names.
func Parse(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration from now (-24h, 2h)", s)
	}
	return now.Add(d), nil
}
