package cli_test

import (
	"os"
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

func TestCheckTakesTheFileAsArgumentOrC(t *testing.T) {
	for _, args := range [][]string{
		{"check", exampleFile(t)},
		{"check", "-c", exampleFile(t)},
		{"check", "--config=" + exampleFile(t)},
	} {
		code, stdout, stderr := runAgora(t, t.TempDir(), nil, args...)
		if code != 0 || !strings.HasSuffix(strings.TrimSpace(stdout), ": ok") {
			t.Errorf("agora %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
}

// TestCheckHidesPasswords is the file: `agora check` printed
// Pa'ss1, KeyPass2 and Pa"ss4.
func TestCheckHidesPasswords(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "leak.toml", `format = "agora/v1"

[pipelines.a.source]
type = "redis_stream"
url = "redis://:Pa'ss1@127.0.0.1:6379/0"
stream = "s"
group = "g"

[[pipelines.a.sinks]]
type = "postgres"
url = "postgres://agora@db:5432/shop?sslpassword=KeyPass2&password=pw3"
table = "t"

[[pipelines.a.sinks]]
type = "postgres"
url = "postgres://agora:Pa\"ss4@db:5432/shop"
table = "t"

[[pipelines.a.sinks]]
type = "redis_stream"
url="redis://127.0.0.1:abc/0?db_password=Leak3"
stream = "out"

[pipelines.a.schedule]
mode = "once"
`)
	code, stdout, stderr := runAgora(t, dir, nil, "check", path)
	out := stdout + stderr
	if code != 1 || !strings.Contains(out, "leak.toml:21:") {
		t.Fatalf("exit %d, want 1 with the bad url at 21\n%s", code, out)
	}
	// Without the bad url, the summary.
	doc, _ := os.ReadFile(path)
	good := strings.Replace(string(doc), `url="redis://127.0.0.1:abc/0?db_password=Leak3"`, `url="redis://:Leak3@127.0.0.1:6379/0"`, 1)
	code, stdout, stderr = runAgora(t, dir, nil, "check", writeConfig(t, dir, "good.toml", good))
	if code != 0 || !strings.Contains(stdout, "xxxxx") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	out += stdout + stderr
	for _, secret := range []string{"Pa'ss1", "KeyPass2", "pw3", `Pa"ss4`, `Pa\"ss4`, "Leak3"} {
		if strings.Contains(out, secret) {
			t.Errorf("agora check shows %q:\n%s", secret, out)
		}
	}
}

// TestCheckListsEachSinkByName: the summary shows every sink with its name
// and type, and a SQL sink's table, mode and key.
func TestCheckListsEachSinkByName(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "sinks.toml", `format = "agora/v1"

[pipelines.orders]
source = { type = "iterable", records = [{id = 1}] }
schedule = { mode = "once" }

[[pipelines.orders.sinks]]
name = "warehouse"
type = "sqlite"
path = "orders.db"
table = "orders"
mode = "upsert"
key = ["id"]

[[pipelines.orders.sinks]]
name = "console"
type = "stdout"
`)
	code, stdout, stderr := runAgora(t, dir, nil, "check", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"  sink:   warehouse: sqlite (table=orders, mode=upsert, key=id, path=orders.db)\n",
		"  sink:   console: stdout\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("agora check output:\n%s\nwant a line %q", stdout, want)
		}
	}
}

// TestCheckShowsTheDeadline: agora check prints a pipeline's deadline with
// its other settings, and rejects one on a schedule without fire times at
// the deadline key, exit 1.
func TestCheckShowsTheDeadline(t *testing.T) {
	dir := t.TempDir()
	good := writeConfig(t, dir, "deadline.toml", `format = "agora/v1"

[pipelines.hourly]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "cron", expr = "0 * * * *" }
deadline = "15m"
`)
	code, stdout, stderr := runAgora(t, dir, nil, "check", good)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if want := "max_dead_letters unlimited, deadline 15m\n"; !strings.Contains(stdout, want) {
		t.Errorf("agora check output:\n%s\nwant a line ending %q", stdout, want)
	}
	bad := writeConfig(t, dir, "once.toml", `format = "agora/v1"

[pipelines.backfill]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
deadline = "15m"
`)
	code, stdout, stderr = runAgora(t, dir, nil, "check", bad)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if want := "once.toml:7:1: pipelines.backfill.deadline: deadline needs a cron or every schedule"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
