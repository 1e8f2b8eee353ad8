package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// CatchUpPolicy says what a cron pipeline does about slots it missed: after
// a fleet-wide outage (every replica down, or Redis down), a process that
// was suspended, or a run that overran several slots.
type CatchUpPolicy uint8

// The catch-up policies.
const (
	// CatchUpSkip (the default) skips missed slots: of the slots due, only
	// the newest runs, and only if it is at most the grace late.
	CatchUpSkip CatchUpPolicy = iota
	// CatchUpLatest runs the newest missed slot once, however late, and
	// skips the older ones.
	CatchUpLatest
	// CatchUpAll runs every missed slot, oldest first, one after another,
	// at most MaxCatchUpRuns of them; the rest are skipped and logged.
	CatchUpAll
)

// MaxCatchUpRuns bounds the slots CatchUpAll runs after one outage.
const MaxCatchUpRuns = engine.MaxCatchUpRuns

// String returns "skip", "latest" or "all", as directives and agora/v1
// files spell it.
func (p CatchUpPolicy) String() string {
	switch p {
	case CatchUpSkip:
		return "skip"
	case CatchUpLatest:
		return "latest"
	case CatchUpAll:
		return "all"
	}
	return fmt.Sprintf("CatchUpPolicy(%d)", uint8(p))
}

// ParseCatchUpPolicy reads "skip", "latest" or "all".
func ParseCatchUpPolicy(s string) (CatchUpPolicy, error) {
	switch strings.TrimSpace(s) {
	case "skip", "":
		return CatchUpSkip, nil
	case "latest":
		return CatchUpLatest, nil
	case "all":
		return CatchUpAll, nil
	}
	return CatchUpSkip, fmt.Errorf("runtime: catch-up policy %q: want skip, latest or all", s)
}

// MarshalText writes the policy's name.
func (p CatchUpPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a policy's name.
func (p *CatchUpPolicy) UnmarshalText(b []byte) error {
	v, err := ParseCatchUpPolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// CompletionReader is the capability (Capabilities.CompletionReader) of
// coordinators that remember, fleet-wide, the last slot of each pipeline
// that completed (the distributed one does). A cron pipeline with a catch-up
// policy other than CatchUpSkip asks it when it starts, so slots missed
// while every replica was down are caught up.
type CompletionReader interface {
	// LastCompleted returns the last completed slot of pipelineID in Unix
	// seconds, and false when none is recorded.
	LastCompleted(ctx context.Context, pipelineID string) (slot int64, ok bool, err error)
}
