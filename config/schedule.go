package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// The catch-up policies of a cron schedule, for schedule.catch_up.
const (
	CatchUpSkip   = "skip"
	CatchUpLatest = "latest"
	CatchUpAll    = "all"
)

// Schedule is a [pipelines.<id>.schedule] table.
type Schedule struct {
	// Mode is "every", "cron", "continuous" or "once".
	Mode string
	// Every is the sum of seconds, minutes, hours and days (mode every).
	Every time.Duration
	// Expr is the cron expression (mode cron).
	Expr string
	// Timezone is the IANA zone the cron times are read in (mode cron),
	// the same as a CRON_TZ= prefix; "" when not set.
	Timezone string
	// CatchUp is the cron catch-up policy: "" (not set), "skip", "latest"
	// or "all".
	CatchUp string
	// Grace is how late a cron slot may still start under the skip
	// policy; nil when not set (runtime.LateSlotGrace).
	Grace *time.Duration
	// RerunInterrupted re-runs a cron or every slot whose holder died
	// before completing it (runtime.ScheduledPipeline.RerunInterrupted).
	RerunInterrupted bool

	schedule runtime.Schedule
}

// Runtime returns the schedule as the runtime takes it.
func (s Schedule) Runtime() runtime.Schedule { return s.schedule }

// String describes the schedule the way /status does.
func (s Schedule) String() string { return s.schedule.String() }

// scheduleModes lists the keys each mode takes besides mode.
var scheduleModes = map[string][]string{
	"every":      {"seconds", "minutes", "hours", "days", "rerun_interrupted"},
	"cron":       {"expr", "catch_up", "grace", "timezone", "rerun_interrupted"},
	"continuous": nil,
	"once":       nil,
}

var modeNames = []string{"every", "cron", "continuous", "once"}

var everyUnits = []struct {
	key  string
	unit time.Duration
}{{"days", 24 * time.Hour}, {"hours", time.Hour}, {"minutes", time.Minute}, {"seconds", time.Second}}

func (d *decoder) schedule(m map[string]any, at path) Schedule {
	all := []string{"mode"}
	for _, mode := range modeNames {
		for _, k := range scheduleModes[mode] {
			// A key two modes take (rerun_interrupted) is one known key.
			if !slices.Contains(all, k) {
				all = append(all, k)
			}
		}
	}
	var s Schedule
	mode, hasMode := d.str(m, at, "mode")
	_, modeWritten := m["mode"]
	switch {
	case !modeWritten:
		d.atKey(at, "%s: mode is missing: add mode = \"every\", \"cron\", \"continuous\" or \"once\"", at)
	case hasMode && !slices.Contains(modeNames, mode):
		d.atValue(at.child("mode"), "%s: unknown mode %s%s", at.child("mode"), d.quoted(at.child("mode"), mode), hint(mode, modeNames, "modes"))
		hasMode = false
	}
	unknown := false
	for k := range m {
		switch {
		case !slices.Contains(all, k):
			d.unknownKey(at, k, all)
			unknown = true
		case k == "mode" || !hasMode || slices.Contains(scheduleModes[mode], k):
		default:
			takes := "no other keys"
			if keys := scheduleModes[mode]; len(keys) > 0 {
				takes = strings.Join(keys, ", ")
			}
			d.atKey(at.child(k), "%s: not used with mode = %q (it takes %s)", at.child(k), mode, takes)
		}
	}
	if !hasMode {
		return s
	}
	s.Mode = mode
	if b, ok := d.boolean(m, at, "rerun_interrupted"); ok && (mode == "every" || mode == "cron") {
		s.RerunInterrupted = b
	}
	switch mode {
	case "every":
		s.Every = d.every(m, at, unknown)
		if s.Every > 0 {
			s.schedule = runtime.Every(s.Every)
		}
	case "cron":
		s.Expr, s.schedule = d.cron(m, at)
		s.Timezone, _ = m["timezone"].(string)
		if policy, ok := d.str(m, at, "catch_up"); ok {
			policies := []string{CatchUpSkip, CatchUpLatest, CatchUpAll}
			if !slices.Contains(policies, policy) {
				d.atValue(at.child("catch_up"), "%s: unknown policy %s%s", at.child("catch_up"), d.quoted(at.child("catch_up"), policy), hint(policy, policies, "policies"))
			}
			s.CatchUp = policy
		}
		// Positive only: the runtime reads a zero grace as its default.
		if g, ok := d.duration(m, at, "grace", false); ok {
			s.Grace = &g
		}
	case "continuous":
		s.schedule = runtime.Continuous()
	case "once":
		s.schedule = runtime.Once()
	}
	return s
}

// every sums the amounts of an every schedule; it returns 0 after
// reporting a problem.
// An unknown key (minute for minutes) already explains a missing
// interval, so then it is not reported again.
func (d *decoder) every(m map[string]any, at path, unknownKeys bool) time.Duration {
	total, given, ok := 0.0, false, true
	for _, u := range everyUnits {
		v, has := m[u.key]
		if !has {
			continue
		}
		given = true
		var n float64
		switch v := v.(type) {
		case int64:
			n = float64(v)
		case float64:
			n = v
		default:
			d.wrongType(at.child(u.key), "a number", v)
			ok = false
			continue
		}
		if n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			d.atValue(at.child(u.key), "%s: %v is not a usable amount: want a positive number", at.child(u.key), v)
			ok = false
			continue
		}
		total += n * float64(u.unit)
	}
	switch {
	case !ok:
		return 0
	case !given && unknownKeys:
		return 0
	case !given:
		d.atKey(at.child("mode"), "%s: mode = \"every\" needs an interval: add seconds, minutes, hours or days (they are summed)", at)
		return 0
	case total < 1:
		d.atKey(at.child("mode"), "%s: the interval is zero: seconds, minutes, hours and days must add up to more than zero", at)
		return 0
	case total > float64(math.MaxInt64):
		d.atKey(at.child("mode"), "%s: the interval is too long", at)
		return 0
	}
	return time.Duration(total)
}

// cron checks expr with the runtime's own parser.
func (d *decoder) cron(m map[string]any, at path) (string, runtime.Schedule) {
	if _, has := m["expr"]; !has {
		d.atKey(at.child("mode"), "%s: mode = \"cron\" needs expr, such as expr = \"0 * * * *\"", at)
		return "", runtime.Schedule{}
	}
	expr, ok := d.str(m, at, "expr")
	if !ok {
		return "", runtime.Schedule{}
	}
	zone, hasZone := "", false
	if _, has := m["timezone"]; has {
		if zone, hasZone = d.str(m, at, "timezone"); !hasZone {
			return expr, runtime.Schedule{}
		}
		if err := runtime.CheckTimeZone(zone); err != nil {
			d.atValue(at.child("timezone"), "%s: %s", at.child("timezone"), err)
			return expr, runtime.Schedule{}
		}
	}
	sched, err := d.parseCron(expr, zone, hasZone)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), runtime.ErrInvalidSchedule.Error()+": ")
		d.atValue(at.child("expr"), "%s: %s", at.child("expr"), msg)
		return expr, runtime.Schedule{}
	}
	return expr, sched
}

// describe is the schedule in file form, for Summary.
func (s Schedule) describe() string {
	switch s.Mode {
	case "every":
		return fmt.Sprintf("every %s", shortDuration(s.Every)) + s.rerunNote()
	case "cron":
		out := fmt.Sprintf("cron %q", s.Expr)
		if s.Timezone != "" {
			out += ", timezone " + s.Timezone
		}
		if s.CatchUp != "" {
			out += ", catch_up " + s.CatchUp
		}
		if s.Grace != nil {
			out += ", grace " + shortDuration(*s.Grace)
		}
		return out + s.rerunNote()
	default:
		return s.Mode
	}
}

// rerunNote is the summary's mention of rerun_interrupted.
func (s Schedule) rerunNote() string {
	if s.RerunInterrupted {
		return ", rerun_interrupted"
	}
	return ""
}

// shortDuration writes 15m rather than 15m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// catchUpPolicy is CatchUp as the runtime takes it; the loader accepted
// only "", skip, latest and all, and "" is the runtime's default, skip.
func (s Schedule) catchUpPolicy() runtime.CatchUpPolicy {
	p, _ := runtime.ParseCatchUpPolicy(s.CatchUp)
	return p
}

// cronKey is one cron expression in one zone, as parseCron caches them.
type cronKey struct {
	expr, zone string
	hasZone    bool
}

type cronParsed struct {
	sched runtime.Schedule
	err   error
}

// parseCron is runtime.CronIn (with a zone) or runtime.Cron, once per
// distinct expression and zone in the file: pipelines often share a
// schedule, and a Schedule is a value that can be shared.
func (d *decoder) parseCron(expr, zone string, hasZone bool) (runtime.Schedule, error) {
	k := cronKey{expr, zone, hasZone}
	if c, ok := d.crons[k]; ok {
		return c.sched, c.err
	}
	var c cronParsed
	if hasZone {
		c.sched, c.err = runtime.CronIn(expr, zone)
	} else {
		c.sched, c.err = runtime.Cron(expr)
	}
	if d.crons == nil {
		d.crons = map[cronKey]cronParsed{}
	}
	d.crons[k] = c
	return c.sched, c.err
}
