package config

import (
	"errors"
	"strings"
	"testing"
)

const envDiagFile = `format = "agora/v1"

[worker]
run_history = "${HISTORY}"

[pipelines.p.source]
type = "${SRC_TYPE}"
records = [{n = 1}]

[pipelines.p.schedule]
mode = "${MODE}"

[[pipelines.p.sinks]]
type = "stdout"
`

// Rule: a diagnostic about a value that came from ${VAR} names the
// reference; it says what the reference expanded to only when that value
// is what is wrong and is no secret, and it quotes control characters.
func TestDiagnosticsNameTheEnvReference(t *testing.T) {
	env := map[string]string{"SRC_TYPE": "bogus", "MODE": "some\ntimes", "HISTORY": "lots"}
	_, err := Parse("p.toml", []byte(envDiagFile), WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	var ds Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("Parse = %v, want diagnostics", err)
	}
	got := ds.Error()
	for _, want := range []string{
		`p.toml:7:8: pipelines.p.source.type: unknown source type "${SRC_TYPE}" (expanded to "bogus")`,
		`p.toml:11:8: pipelines.p.schedule.mode: unknown mode "${MODE}" (expanded to "some\ntimes")`,
		`p.toml:4:15: worker.run_history: "${HISTORY}" (expanded to "lots") is not RUNS[,MAX_AGE]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack\n  %s\ngot:\n%s", want, got)
		}
	}
	for _, d := range ds {
		if strings.ContainsAny(d.Message, "\n\r\t") {
			t.Errorf("a raw control character in %q", d.Message)
		}
	}
}

// Rule: a secret that came from ${VAR} is never shown, not even as what
// the reference expanded to.
func TestDiagnosticsHideASecretEnvValue(t *testing.T) {
	const file = `format = "agora/v1"

[pipelines.p.source]
type = "iterable"
records = [{n = 1}]

[pipelines.p.schedule]
mode = "${REDIS}"

[[pipelines.p.sinks]]
type = "stdout"
`
	env := map[string]string{"REDIS": "redis://u:hunter22@localhost:6379/0"}
	_, err := Parse("p.toml", []byte(file), WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	if err == nil {
		t.Fatal("Parse accepted the file")
	}
	if strings.Contains(err.Error(), "hunter22") {
		t.Fatalf("the secret is shown:\n%v", err)
	}
	if !strings.Contains(err.Error(), `unknown mode "${REDIS}";`) {
		t.Errorf("the reference is not named:\n%v", err)
	}
}

// Rule: every diagnostic is one line: control characters in a message
// from anywhere (another package's error quoting a value) are escaped.
func TestDiagnosticMessagesEscapeControlCharacters(t *testing.T) {
	d := &decoder{file: "p.toml", ix: newIndex(nil), broken: map[string]bool{}}
	d.addAt(position{1, 1}, "%s: %s", "x", "bad\nvalue\t\x00")
	if got := d.diags[0].Message; got != `x: bad\nvalue\t\x00` {
		t.Fatalf("message = %q", got)
	}
}
