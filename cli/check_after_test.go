package cli_test

import (
	"strings"
	"testing"
)

// TestCheckShowsDependencies: agora check prints a pipeline's upstreams,
// and rejects one with another schedule at the id's position, exit 1.
func TestCheckShowsDependencies(t *testing.T) {
	dir := t.TempDir()
	good := writeConfig(t, dir, "after.toml", `format = "agora/v1"

[pipelines.extract]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.load]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }
after = ["extract"]
`)
	code, stdout, stderr := runAgora(t, dir, nil, "check", good)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if want := "  after:  extract (each slot waits for theirs until the next slot)\n"; !strings.Contains(stdout, want) {
		t.Errorf("agora check output:\n%s\nwant a line %q", stdout, want)
	}
	bad := writeConfig(t, dir, "daily.toml", `format = "agora/v1"

[pipelines.extract]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }

[pipelines.load]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 3 * * *" }
after = ["extract"]
`)
	code, stdout, stderr = runAgora(t, dir, nil, "check", bad)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if want := `daily.toml:12:10: pipelines.load.after[0]: "extract" runs cron="0 * * * *", this pipeline cron="0 3 * * *": both need the same schedule`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
