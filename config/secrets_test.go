package config

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/postgres"
)

// withPostgres is the default registry with the postgres components, as
// the agora command has them.
func withPostgres() Option {
	r := etl.Builtins()
	postgres.Register(r)
	return WithRegistry(r)
}

// leakyPasswords stop simple rules: quotes, '@', '/', spaces.
var leakyPasswords = []string{`Pa'ss1`, `Pa"ss4`, `p@ss/w0rd`, `my pass word`, `a'b"c d@e/f`}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string { return strconv.Quote(s) }

// leakyDoc is a file with pw in a URL of each scheme and in secret query
// keys.
func leakyDoc(pw string) string {
	q := func(u string) string { return tomlString(u) }
	return `format = "agora/v1"

[pipelines.a.source]
type = "redis_stream"
url = ` + q("redis://:"+pw+"@127.0.0.1:6379/0") + `
stream = "s"
group = "g"

[[pipelines.a.sinks]]
type = "postgres"
url = ` + q("postgres://agora@db:5432/shop?sslpassword="+pw+"&password=pw3") + `
table = "t"

[[pipelines.a.sinks]]
type = "postgres"
url = ` + q("postgres://agora:"+pw+"@db:5432/shop") + `
table = "t"

[[pipelines.a.sinks]]
type = "redis_stream"
url = ` + q("redis+cluster://u:"+pw+"@127.0.0.1:7000") + `
stream = "out"

[[pipelines.a.sinks]]
type = "redis_stream"
url = ` + q("redis+sentinel://127.0.0.1:26379?master_name=m&sentinel_password="+pw) + `
stream = "out"

[[pipelines.a.sinks]]
type = "redis_stream"
url = ` + q("redis://127.0.0.1:6379/0?db_password="+pw+"&client_secret="+pw+"&access_token="+pw) + `
stream = "out"

[pipelines.a.schedule]
mode = "once"
`
}

// shows reports whether out shows pw in any spelling a message uses.
func shows(out, pw string) bool {
	quoted := strconv.Quote(pw)
	return strings.Contains(out, pw) || strings.Contains(out, quoted[1:len(quoted)-1])
}

// TestCheckOutputHidesPasswords is what `agora check` prints: the summary
// of a valid file, the diagnostics of one that is not.
func TestCheckOutputHidesPasswords(t *testing.T) {
	for _, pw := range leakyPasswords {
		f, err := Parse("leak.toml", []byte(leakyDoc(pw)), withPostgres(), WithLookupEnv(noEnv))
		out := ""
		if err != nil {
			out = err.Error()
		} else {
			out = f.Summary()
		}
		if shows(out, pw) || strings.Contains(out, "pw3") {
			t.Errorf("password %q: check output shows it:\n%s", pw, out)
		}
		if !strings.Contains(out, "xxxxx") {
			t.Errorf("password %q: check output hides nothing:\n%s", pw, out)
		}
	}
}

func TestCheckSummaryOfTheIssueExamples(t *testing.T) {
	doc := `format = "agora/v1"

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

[pipelines.a.schedule]
mode = "once"
`
	f, err := Parse("leak.toml", []byte(doc), withPostgres(), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	out := f.Summary()
	for _, secret := range []string{"Pa'ss1", "KeyPass2", "pw3", `Pa"ss4`} {
		if strings.Contains(out, secret) {
			t.Errorf("summary shows %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"redis://:xxxxx@127.0.0.1:6379/0", "sslpassword=xxxxx&password=xxxxx", "postgres://agora:xxxxx@db:5432/shop"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// TestDiagnosticsHidePasswords covers URL parse errors, which echo their
// input.
func TestDiagnosticsHidePasswords(t *testing.T) {
	secrets := append([]string{"Leak3"}, leakyPasswords...)
	for _, pw := range secrets {
		doc := `format = "agora/v1"

[pipelines.a.source]
type = "redis_stream"
url=` + tomlString("redis://127.0.0.1:abc/0?db_password="+pw) + `
stream = "s"
group = "g"

[[pipelines.a.sinks]]
type = "redis_stream"
url = ` + tomlString("redis://u:"+pw+"@127.0.0.1:abc/0") + `
stream = "out"
`
		_, err := Parse("leak.toml", []byte(doc), WithLookupEnv(noEnv))
		var diags Diagnostics
		if !errors.As(err, &diags) {
			t.Fatalf("Parse = %v, want diagnostics", err)
		}
		if shows(err.Error(), pw) {
			t.Errorf("password %q: diagnostics show it:\n%v", pw, err)
		}
		if !strings.Contains(err.Error(), "leak.toml:5:") {
			t.Errorf("diagnostics lack the url's position:\n%v", err)
		}
	}
}

type leakyConfig struct {
	URL      string `toml:"url"`
	Password string `toml:"password"`
}

type leakySink struct{ c leakyConfig }

// Write fails the way a driver might: the URL and the password in its
// message, unquoted.
func (s leakySink) Write(context.Context, []etl.Record) error {
	return fmt.Errorf("cannot log in to %s as password %s refused", s.c.URL, s.c.Password)
}

// TestRunErrorsHidePasswords is what the worker logs and /status shows as
// last_error: the run's error.
func TestRunErrorsHidePasswords(t *testing.T) {
	var out testOutputs
	r := testRegistry(&out)
	etl.RegisterSink(r, "leaky", "fails with its settings", func(_ context.Context, c leakyConfig) (etl.Sink, error) {
		return leakySink{c}, nil
	})
	for _, pw := range leakyPasswords {
		doc := `format = "agora/v1"
[pipelines.p]
source = { type = "iterable", records = [{id = 1}] }
sinks = [{ type = "leaky", url = ` + tomlString("postgres://agora:"+pw+"@db:5432/shop?sslpassword="+pw) + `, password = ` + tomlString(pw) + ` }]
schedule = { mode = "once" }
`
		f, err := Parse("r.toml", []byte(doc), WithRegistry(r), WithLookupEnv(noEnv))
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.Pipelines[0].Factory()(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		err = p.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("Run = %v", err)
		}
		if shows(err.Error(), pw) {
			t.Errorf("password %q: run error shows it: %v", pw, err)
		}
	}
}
