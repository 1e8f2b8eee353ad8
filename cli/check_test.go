package cli_test

import (
	"strings"
	"testing"
)

func TestCheckAcceptsTheExampleFile(t *testing.T) {
	code, stdout, stderr := runAgora(t, t.TempDir(), nil, "check", "--config", exampleFile(t))
	if code != 0 {
		t.Fatalf("agora check: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "orders") || !strings.HasSuffix(strings.TrimSpace(stdout), ": ok") {
		t.Fatalf("agora check output:\n%s", stdout)
	}
}

func TestCheckReportsEveryProblemWithItsPosition(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "bad.toml", `format = "agora/v1"

[wroker]
health_port = 8080

[pipelines.orders.source]
type = "iterable"
recods = [{id = 1}]

[pipelines.orders.schedule]
mode = "every"
minutes = "15"

[[pipelines.orders.sinks]]
type = "stdot"
`)
	code, stdout, stderr := runAgora(t, dir, nil, "check", "--config", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"bad.toml:3:", "wroker", "worker",
		"bad.toml:8:", "recods", "records",
		"bad.toml:12:", "minutes",
		"bad.toml:15:", "stdot",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stderr, "nothing started") {
		t.Errorf("stderr does not say nothing started:\n%s", stderr)
	}
}

func TestCheckNeverPrintsAPassword(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "secret.toml", `format = "agora/v1"

[pipelines.events.source]
type = "redis_stream"
url = "redis://agora:s3cr3t-pw@127.0.0.1:6399/0"
stream = "events"
group = "workers"

[pipelines.events.schedule]
mode = "continuous"

[[pipelines.events.sinks]]
type = "stdout"

[[pipelines.events.sinks]]
type = "redis_stream"
url = "${OUT_URL}"
stream = "copy"
`)
	code, stdout, stderr := runAgora(t, dir, []string{"OUT_URL=redis://:other-pw@127.0.0.1:6398/1"}, "check", "--config", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, secret := range []string{"s3cr3t-pw", "other-pw"} {
		if strings.Contains(stdout+stderr, secret) {
			t.Fatalf("agora check printed the password %q:\n%s%s", secret, stdout, stderr)
		}
	}
	if !strings.Contains(stdout, "127.0.0.1:6399") {
		t.Fatalf("the summary should still name the server:\n%s", stdout)
	}
}
