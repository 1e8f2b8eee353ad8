package doclinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/modtest"
)

func TestSlugSpellsAnchorsAsGitHubDoes(t *testing.T) {
	for heading, want := range map[string]string{
		"The run span `agora.run`":                           "the-run-span-agorarun",
		"worker.Main":                                        "workermain",
		"Kafka (`etl/kafka`)":                                "kafka-etlkafka",
		"Takeover of a dead worker's leases":                 "takeover-of-a-dead-workers-leases",
		"`@every` is aligned to the epoch":                   "every-is-aligned-to-the-epoch",
		"Schedules ([docs/schedules.md](docs/schedules.md))": "schedules-docsschedulesmd",
		"Config-only workers (agora/v1)":                     "config-only-workers-agorav1",
		"What a failover can cost — and why":                 "what-a-failover-can-cost--and-why",
		"SQL sinks and sources: postgres and sqlite":         "sql-sinks-and-sources-postgres-and-sqlite",
		"Clocks go forward: New York, 2026-03-08":            "clocks-go-forward-new-york-2026-03-08",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n\n## Same\n\n## Same\n\n"+
		"[ok](docs/a.md#a-section) [ok](#same-1) [ok](LICENSE) [url](https://example.com/x#y)\n"+
		"`[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n## not a heading\n```\n"+
		"[gone](docs/b.md) [bad anchor](docs/a.md#nope) [self](#not-a-heading) [out](../x.md)\n")
	write("LICENSE", "")
	write("docs/a.md", "# A\n\n## A section\n\n[back](../README.md#top)\n")
	errs := Check(root, []string{"README.md", "docs/a.md"})
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	want := []string{
		"README.md:13: docs/b.md: no such file",
		"README.md:13: docs/a.md#nope: docs/a.md has no heading with anchor #nope",
		"README.md:13: #not-a-heading: README.md has no heading with anchor #not-a-heading",
		"README.md:13: ../x.md leaves the repository",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReadmeAndDocsLinksResolve keeps every relative link and anchor of
// README.md and docs/*.md pointing at a file and a heading that exist, so
// each page and section the README links to is one click away.
func TestReadmeAndDocsLinksResolve(t *testing.T) {
	root := modtest.RepoRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	for _, err := range Check(root, files) {
		t.Error(err)
	}
}

// TestReadmeLinksEveryDocsPage: every page of docs/ is linked from the
// README.
func TestReadmeLinksEveryDocsPage(t *testing.T) {
	root := modtest.RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range parse(string(b)).links {
		path, _, _ := strings.Cut(l.target, "#")
		linked[path] = true
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if rel := "docs/" + filepath.Base(d); !linked[rel] {
			t.Errorf("README.md does not link %s", rel)
		}
	}
}
