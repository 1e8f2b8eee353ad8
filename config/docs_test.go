package config

import (
	"os"
	"strings"
	"testing"
)

// TestDocsDescribeEveryKey keeps the Keys section of docs/config.md in
// step with the keys the loader accepts.
func TestDocsDescribeEveryKey(t *testing.T) {
	b, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Keys\n")
	if start < 0 {
		t.Fatal("docs/config.md has no Keys section")
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	// The top-level tables appear as [worker] and [pipelines.<id>].
	keys := []string{"format", "[worker]", "[pipelines.<id>]"}
	if len(topKeys) != 3 {
		t.Errorf("top-level keys %v: update this test and docs/config.md", topKeys)
	}
	keys = append(keys, workerKeys...)
	keys = append(keys, pipelineKeys...)
	keys = append(keys, afterKeys...)
	keys = append(keys, tracingKeys...)
	for _, mode := range modeNames {
		keys = append(keys, `"`+mode+`"`)
		keys = append(keys, scheduleModes[mode]...)
	}
	keys = append(keys, `"`+CatchUpSkip+`"`, `"`+CatchUpLatest+`"`, `"`+CatchUpAll+`"`, `"`+ExporterOTLP+`"`, `"`+ExporterStdout+`"`)
	for _, k := range keys {
		if !strings.Contains(section, "`"+k+"`") {
			t.Errorf("docs/config.md's Keys section does not mention `%s`", k)
		}
	}
}
