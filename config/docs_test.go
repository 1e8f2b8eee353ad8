package config

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeDescribesEveryKey keeps the README's format section in step
// with the keys the loader accepts.
func TestReadmeDescribesEveryKey(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "### Config-only workers (agora/v1)")
	if start < 0 {
		t.Fatal("README.md has no Config-only workers (agora/v1) section")
	}
	section := readme[start:]
	if end := strings.Index(section[4:], "\n### "); end >= 0 {
		section = section[:end+4]
	}
	// The top-level tables appear as [worker] and [pipelines.<id>].
	keys := []string{"format", "[worker]", "[pipelines.<id>]"}
	if len(topKeys) != 3 {
		t.Errorf("top-level keys %v: update this test and the README", topKeys)
	}
	keys = append(keys, workerKeys...)
	keys = append(keys, pipelineKeys...)
	keys = append(keys, tracingKeys...)
	for _, mode := range modeNames {
		keys = append(keys, `"`+mode+`"`)
		keys = append(keys, scheduleModes[mode]...)
	}
	keys = append(keys, `"`+CatchUpSkip+`"`, `"`+CatchUpLatest+`"`, `"`+CatchUpAll+`"`, `"`+ExporterOTLP+`"`, `"`+ExporterStdout+`"`)
	for _, k := range keys {
		if !strings.Contains(section, "`"+k+"`") {
			t.Errorf("the README's agora/v1 section does not mention `%s`", k)
		}
	}
	if _, err := os.Stat("../docs/config.md"); err != nil {
		t.Errorf("docs/config.md: %v", err)
	}
}
