package config

import (
	"strings"
	"testing"
)

func TestPipelinesInFileOrder(t *testing.T) {
	var out testOutputs
	doc := `format = "agora/v1"
[pipelines.zeta]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
[pipelines.alpha.source]
type = "iterable"
[[pipelines.alpha.sinks]]
type = "stdout"
[pipelines.alpha.schedule]
mode = "once"
[pipelines.mid]
source = { type = "iterable" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`
	f, err := Parse("o.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.PipelineIDs(), " "); got != "zeta alpha mid" {
		t.Errorf("PipelineIDs = %s, want file order", got)
	}
	if f.Pipeline("alpha") == nil || f.Pipeline("alpha").ID != "alpha" || f.Pipeline("nope") != nil {
		t.Errorf("Pipeline lookup")
	}
	if f.Path != "o.toml" {
		t.Errorf("Path = %q", f.Path)
	}
}

func TestTopLevelProblems(t *testing.T) {
	var out testOutputs
	for _, tc := range []struct{ doc, want string }{
		{`format = 1`, "x.toml:1:1: no pipelines\nx.toml:1:10: format: want a string, got an integer"},
		{"format = \"agora/v1\"\npipelines = 3", "x.toml:2:13: pipelines: want a table, got an integer"},
		{"format = \"agora/v1\"\n[pipelines]", "x.toml:1:1: no pipelines"},
		{"format = \"agora/v1\"\nworker = 1\n[pipelines]\nx = 1", "x.toml:2:10: worker: want a table, got an integer\nx.toml:4:5: pipelines.x: want a table, got an integer"},
	} {
		_, err := Parse("x.toml", []byte(tc.doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
		ds, _ := err.(Diagnostics)
		var got []string
		for _, d := range ds {
			got = append(got, d.String())
		}
		// Compare the first words of each line: the fixed part of the message.
		wantLines := strings.Split(tc.want, "\n")
		if len(got) != len(wantLines) {
			t.Errorf("%q: %v, want %q", tc.doc, got, wantLines)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], wantLines[i]) {
				t.Errorf("%q: line %d = %q, want prefix %q", tc.doc, i, got[i], wantLines[i])
			}
		}
	}
}
