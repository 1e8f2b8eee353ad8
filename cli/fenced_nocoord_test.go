package cli_test

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

const fencedSQLite = `format = "agora/v1"

[pipelines.first.source]
type = "iterable"
records = [{n = 1}, {n = 2}]

[pipelines.first.schedule]
mode = "cron"
expr = "0 3 * * *"

[[pipelines.first.sinks]]
type = "sqlite"
path = "out.db"
table = "t"
`

// Rule: agora check warns, and still exits 0, about a fenced SQL sink when
// no coordinator is configured, naming AGORA_DISTRIBUTED_REDIS_URL and
// allow_unfenced; with the URL set it says nothing.
func TestCheckWarnsAboutAFencedSinkWithoutACoordinator(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", fencedSQLite)
	code, stdout, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "check", path)
	if code != 0 || !strings.Contains(stdout, "p.toml: ok") {
		t.Fatalf("agora check: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"p.toml:12:8: warning: pipelines.first.sinks[0]: the sqlite sink", "AGORA_DISTRIBUTED_REDIS_URL", "allow_unfenced = true"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("check's warning lacks %q:\n%s", want, stderr)
		}
	}
	_, _, stderr = runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL=redis://127.0.0.1:1/0"}, "check", path)
	if strings.Contains(stderr, "warning") {
		t.Errorf("agora check warns with a coordinator configured:\n%s", stderr)
	}
}

// Rule: agora run says a fenced sink's refusal once per run, naming
// AGORA_DISTRIBUTED_REDIS_URL and allow_unfenced, and exits 1.
func TestRunSaysTheFencedSinkErrorOnce(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", fencedSQLite)
	code, _, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "run", "--config", path)
	if code != 1 {
		t.Fatalf("agora run: exit %d, want 1\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "fencing token 0"); n != 1 {
		t.Errorf("the fencing error appears %d times, want once:\n%s", n, stderr)
	}
	for _, want := range []string{"AGORA_DISTRIBUTED_REDIS_URL", "allow_unfenced"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the error does not name %s:\n%s", want, stderr)
		}
	}
}

// Rule: the no-Redis warning ("every one of them runs every slot") is for
// a long-running worker only: not for -help, pipelines, an unknown
// subcommand or agora run.
func TestNoRedisWarningOnlyForALongRunningWorker(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "p.toml", twoPipelines)
	const warning = "every one of them runs every slot"
	noURL := []string{"AGORA_DISTRIBUTED_REDIS_URL="}
	for _, args := range [][]string{
		{"worker", "--config", path, "-help"},
		{"worker", "--config", path, "pipelines"},
		{"worker", "--config", path, "no-such-command"},
		{"run", "--config", path},
	} {
		_, stdout, stderr := runAgora(t, dir, noURL, args...)
		if strings.Contains(stdout+stderr, warning) {
			t.Errorf("agora %q warns about Redis:\n%s%s", args, stdout, stderr)
		}
	}
	p := startAgora(t, dir, noURL, "worker", "--config", path)
	p.waitOutput(t, p.stderr, warning, time.Minute)
	p.signal(t, syscall.SIGTERM)
	p.wait(t, time.Minute)
}
