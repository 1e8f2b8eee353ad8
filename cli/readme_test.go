package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/modtest"
)

// TestReadmeConfigBlockIsTheExample keeps the README's config-only block
// the file the tests run, so the README cannot show a file that does not
// work.
func TestReadmeConfigBlockIsTheExample(t *testing.T) {
	root := modtest.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- config: examples/config-only/pipelines.toml -->\n```toml\n"
	text := string(readme)
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q block", marker)
	}
	block := text[i+len(marker):]
	block = block[:strings.Index(block, "```")]
	file, err := os.ReadFile(filepath.Join(root, "examples", "config-only", "pipelines.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if block != string(file) {
		t.Fatalf("README block differs from examples/config-only/pipelines.toml:\n%s\n---\n%s", block, file)
	}
}
