package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/gen"
)

// TestDocsDescribeEveryKey keeps docs/agoragen.md in step with the registry
// the parser uses.
func TestDocsDescribeEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "agoragen.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), `\|`, "|")
	for _, d := range gen.Registry {
		if !strings.Contains(doc, "### `"+gen.Namespace+d.Name+"`") {
			t.Errorf("docs/agoragen.md has no section for %s%s", gen.Namespace, d.Name)
		}
		for _, k := range d.Keys {
			if !strings.Contains(doc, "`"+k.Usage()+"`") {
				t.Errorf("docs/agoragen.md does not describe %s", k.Usage())
			}
		}
	}
	for _, flag := range []string{"-o", "-check", "-diff", "-main", "-tags", "-v"} {
		if !strings.Contains(doc, "| `"+flag) {
			t.Errorf("docs/agoragen.md does not describe flag %s", flag)
		}
	}
}

// TestDocsSayWhenADeadReplicasRunsComeBack keeps the settings table of
// docs/distributed.md honest about the cost of a killed lease holder.
func TestDocsSayWhenADeadReplicasRunsComeBack(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "distributed.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `LeaseTTL` |") {
			if !strings.Contains(line, "a dead replica's runs are taken over after at most LeaseTTL") {
				t.Fatalf("the LeaseTTL row does not say when a dead replica's runs are taken over:\n%s", line)
			}
			return
		}
	}
	t.Fatal("docs/distributed.md has no LeaseTTL row")
}
