package config

import (
	"errors"
	"strings"
	"testing"
)

// TestAfterReachesTheScheduledPipeline: after and after_timeout reach
// runtime.ScheduledPipeline, and agora check's summary shows them.
func TestAfterReachesTheScheduledPipeline(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.extract]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.clean]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.load]
after = ["extract", "clean"]
after_timeout = "20m"
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }
`
	var out testOutputs
	f, err := Parse("c.toml", []byte(doc), WithRegistry(testRegistry(&out)))
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range f.ScheduledPipelines() {
		want := ""
		if sp.PipelineID == "load" {
			want = "[extract clean] 20m0s"
		}
		if got := strings.Join(sp.After, " "); (want == "" && (got != "" || sp.AfterTimeout != 0)) ||
			(want != "" && "["+got+"] "+sp.AfterTimeout.String() != want) {
			t.Errorf("%s: After %v, AfterTimeout %s; want %s", sp.PipelineID, sp.After, sp.AfterTimeout, want)
		}
	}
	if s := f.Summary(); !strings.Contains(s, "  after:  extract, clean (each slot waits for theirs at most 20m)\n") {
		t.Errorf("summary does not show the dependencies:\n%s", s)
	}
}

// TestAfterProblems: each problem is reported at its line and column, all
// at once.
func TestAfterProblems(t *testing.T) {
	doc := `format = "agora/v1"
[pipelines.hourly]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.daily]
after = ["hourly", "hourlly", "daily", "hourly", 7, ""]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 3 * * *" }

[pipelines.stream]
after = ["hourly"]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "continuous" }

[pipelines.lone]
after_timeout = "10m"
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.ping]
after = ["pong"]
after_timeout = "soon"
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.pong]
after = "ping"
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.drift]
after = ["hourly"]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "every", hours = 1 }

[pipelines.pang]
after = ["pang2"]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.pang2]
after = ["pang"]
source = { type = "iterable", records = [{ id = 1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }
`
	var out testOutputs
	_, err := Parse("c.toml", []byte(doc), WithRegistry(testRegistry(&out)))
	var diags Diagnostics
	if !errors.As(err, &diags) {
		t.Fatalf("Parse = %v, want Diagnostics", err)
	}
	got := err.Error()
	for _, want := range []string{
		`c.toml:8:10: pipelines.daily.after[0]: "hourly" runs cron="0 * * * *", this pipeline cron="0 3 * * *": both need the same schedule`,
		`c.toml:8:20: pipelines.daily.after[1]: no pipeline "hourlly" in this file (did you mean "hourly"?)`,
		`c.toml:8:31: pipelines.daily.after[2]: "daily" is this pipeline: a pipeline cannot wait for itself`,
		`c.toml:8:40: pipelines.daily.after[3]: "hourly" is named twice`,
		`c.toml:8:50: pipelines.daily.after[4]: want a string, got an integer`,
		`c.toml:8:53: pipelines.daily.after[5]: an empty pipeline id`,
		`c.toml:14:1: pipelines.stream.after: after needs a cron schedule (mode = "continuous" has no slots to wait for)`,
		`c.toml:39:1: pipelines.drift.after: after needs a cron schedule, not mode = "every": an every run starts an interval after the previous one finished, so its slots drift`,
		`c.toml:20:1: pipelines.lone.after_timeout: after_timeout without after`,
		`pipelines.ping.after_timeout:`,
		`pipelines.pong.after: want an array of pipeline ids, got a string`,
		`c.toml:51:10: pipelines.pang2.after[0]: after makes a cycle, pang → pang2 → pang: none of them would ever start`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "makes a cycle") != 1 {
		t.Errorf("the cycle is reported %d times, want once:\n%s", strings.Count(got, "makes a cycle"), got)
	}
}
