package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// missedWarnings returns the skipped-slot warnings in JSON log output.
func missedWarnings(t *testing.T, logs *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad log line %q: %v", line, err)
		}
		if msg, _ := m["msg"].(string); strings.HasPrefix(msg, "cron slots skipped") {
			out = append(out, m)
		}
	}
	return out
}

// newMissedRunner returns a started cron runner on spec and a stepping
// clock at t, logging JSON into logs.
func newMissedRunner(t *testing.T, spec string, at time.Time, logs *bytes.Buffer) (*Runner, *steppingClock) {
	t.Helper()
	clock := &steppingClock{t: at}
	p := PipelineFunc(func(context.Context) error { return nil })
	sp := &Spec{PipelineID: "secondly", Schedule: mustCron(spec), Factory: FactoryFunc(func(context.Context) (Pipeline, error) { return p, nil })}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := newRunner(sp, testEnv(clock, logger))
	r.begin(clock.t)
	return r, clock
}

// TestSkippedSlotsAreLoggedOncePerMinuteWithTheirCause is the fleet whose
// lease requests queue for more than a second: every attempt finds the next
// slot already due, so each skips one slot. The skips are all counted, but
// logged at most once per missedSlotLogInterval, saying that a newer slot
// overtook them rather than that they were more than the grace late.
func TestSkippedSlotsAreLoggedOncePerMinuteWithTheirCause(t *testing.T) {
	logs := &bytes.Buffer{}
	start := time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)
	r, clock := newMissedRunner(t, "* * * * * *", start, logs)
	end := start.Add(150 * time.Second)
	for clock.t.Before(end) {
		// Each attempt starts 1.5 s after the slot it is due for.
		clock.t = timeOf(r.next).Add(1500 * time.Millisecond)
		if _, done, err := r.step(clock.t); done || err != nil {
			t.Fatal(done, err)
		}
	}
	lines := missedWarnings(t, logs)
	if len(lines) < 2 || len(lines) > 3 {
		t.Fatalf("%d skipped-slot warnings in 150 s, want one per minute:\n%s", len(lines), logs)
	}
	var logged float64
	for i, m := range lines {
		msg := m["msg"].(string)
		if !strings.Contains(msg, "a newer slot was already due") || strings.Contains(msg, "late-slot grace") {
			t.Errorf("warning %d does not say the slots were overtaken: %q", i, msg)
		}
		if m["pipeline_id"] != "secondly" || m["exact_count"] != true {
			t.Errorf("warning %d: %v", i, m)
		}
		if i > 0 {
			if _, ok := m["since"]; !ok {
				t.Errorf("aggregated warning %d does not say since when it counts: %v", i, m)
			}
		}
		logged += m["missed_slots"].(float64)
	}
	r.mu.Lock()
	rs := r.rareCopy()
	missed, pending := rs.missed, rs.missedLog.counts[missedOvertaken]
	r.mu.Unlock()
	if missed < 60 {
		t.Fatalf("%d slots counted missed in 150 s of attempts 1.5 s late, want one per attempt", missed)
	}
	if uint64(logged)+pending != missed {
		t.Errorf("warnings report %v slots and %d wait for the next one, but %d were skipped", logged, pending, missed)
	}
}

// TestSlotsBehindTheGraceSayWhy: an hourly pipeline whose process was
// paused from 10:07 to 13:30 runs none of 11:00, 12:00 and 13:00, and the
// warning says they were more than the late-slot grace behind.
func TestSlotsBehindTheGraceSayWhy(t *testing.T) {
	logs := &bytes.Buffer{}
	start := time.Date(2025, 3, 10, 10, 7, 0, 0, time.UTC)
	r, clock := newMissedRunner(t, "0 * * * *", start, logs)
	clock.t = time.Date(2025, 3, 10, 13, 30, 0, 0, time.UTC)
	if _, done, err := r.step(clock.t); done || err != nil {
		t.Fatal(done, err)
	}
	lines := missedWarnings(t, logs)
	if len(lines) != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", len(lines), logs)
	}
	if msg := lines[0]["msg"].(string); !strings.Contains(msg, "more than the late-slot grace behind") {
		t.Errorf("warning does not say the slots were behind the grace: %q", msg)
	}
	if lines[0]["missed_slots"] != float64(3) || lines[0]["exact_count"] != true {
		t.Errorf("warning %v, want missed_slots 3, exact", lines[0])
	}
}
