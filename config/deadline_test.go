package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDeadlineReachesTheScheduledPipeline decodes deadline on a cron and an
// every pipeline, written as a Go duration, a number of seconds and a
// ${VAR} reference: each reaches runtime.ScheduledPipeline.Deadline, and
// the summary agora check prints shows it. A pipeline without the key has
// no deadline.
func TestDeadlineReachesTheScheduledPipeline(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.hourly]
deadline = "15m"
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.often]
deadline = 90
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "every", minutes = 5 }

[pipelines.from_env]
deadline = "${ORDERS_DEADLINE}"
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "every", hours = 1 }

[pipelines.plain]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "every", hours = 1 }
`
	env := func(k string) (string, bool) {
		if k == "ORDERS_DEADLINE" {
			return "1h30m", true
		}
		return "", false
	}
	var out testOutputs
	f, err := Parse("c.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"hourly": 15 * time.Minute, "often": 90 * time.Second, "from_env": 90 * time.Minute, "plain": 0}
	for _, sp := range f.ScheduledPipelines() {
		if sp.Deadline != want[sp.PipelineID] {
			t.Errorf("%s: ScheduledPipeline.Deadline = %s, want %s", sp.PipelineID, sp.Deadline, want[sp.PipelineID])
		}
	}
	s := f.Summary()
	for _, line := range []string{
		"max_dead_letters unlimited, deadline 15m\n",
		"max_dead_letters unlimited, deadline 1m30s\n",
		"max_dead_letters unlimited, deadline 1h30m\n",
	} {
		if !strings.Contains(s, line) {
			t.Errorf("summary does not show %q:\n%s", strings.TrimSpace(line), s)
		}
	}
	if strings.Count(s, "deadline") != 3 {
		t.Errorf("summary shows a deadline for a pipeline without one:\n%s", s)
	}
}

// TestDeadlineErrors reports each unusable deadline at its position: the
// value for a value that is not a positive duration, the key for a
// deadline on a schedule without fire times, all in one run.
func TestDeadlineErrors(t *testing.T) {
	for _, tc := range []struct {
		name, pipeline, want string
	}{
		{"not a duration", `deadline = "soon"` + "\n" + `schedule = { mode = "every", minutes = 5 }`,
			`c.toml:3:12: pipelines.p.deadline: "soon" is not a duration: write a Go duration such as "90s" or "1h30m", or a number of seconds`},
		{"zero", `deadline = "0s"` + "\n" + `schedule = { mode = "cron", expr = "0 * * * *" }`,
			`c.toml:3:12: pipelines.p.deadline: 0s must be positive`},
		{"zero seconds", `deadline = 0` + "\n" + `schedule = { mode = "cron", expr = "0 * * * *" }`,
			`c.toml:3:12: pipelines.p.deadline: 0s must be positive`},
		{"negative", `deadline = "-1m"` + "\n" + `schedule = { mode = "every", minutes = 5 }`,
			`c.toml:3:12: pipelines.p.deadline: -1m0s must be positive`},
		{"wrong type", `deadline = [1]` + "\n" + `schedule = { mode = "every", minutes = 5 }`,
			`c.toml:3:12: pipelines.p.deadline: want a duration (a string such as "90s" or a number of seconds), got an array`},
		{"continuous", `schedule = { mode = "continuous" }` + "\n" + `  deadline = "15m"`,
			`c.toml:4:3: pipelines.p.deadline: deadline needs a cron or every schedule (mode = "continuous" has no fire times to count from)`},
		{"once", `deadline = "15m"` + "\n" + `schedule = { mode = "once" }`,
			`c.toml:3:1: pipelines.p.deadline: deadline needs a cron or every schedule (mode = "once" has no fire times to count from)`},
		{"every under a second", `deadline = "1s"` + "\n" + `schedule = { mode = "every", seconds = 0.5 }`,
			`c.toml:3:1: pipelines.p.deadline: deadline needs an every interval of at least a second, not 500ms: faster runs have no slot to judge`},
		{"misspelt", `dedline = "15m"` + "\n" + `schedule = { mode = "every", minutes = 5 }`,
			`c.toml:3:1: pipelines.p: unknown key "dedline" (did you mean "deadline"?)`},
		{"unset variable", `deadline = "${NOPE}"` + "\n" + `schedule = { mode = "every", minutes = 5 }`,
			`c.toml:3:13: pipelines.p.deadline: environment variable NOPE is not set (write ${NOPE:-default} to give a default)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "format = \"agora/v1\"\n[pipelines.p]\n" + tc.pipeline + "\n" +
				"source = { type = \"iterable\", records = [{ id = 1 }] }\nsinks = [{ type = \"stdout\" }]\n"
			var out testOutputs
			_, err := Parse("c.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
			var ds Diagnostics
			if !errors.As(err, &ds) {
				t.Fatalf("Parse = %v, want Diagnostics", err)
			}
			if got := ds.Error(); got != tc.want {
				t.Errorf("diagnostics:\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
