package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

const root = "../.."

// TestEveryModuleIsInTheWorkspaceAndTheMakefile: a go.mod added without
// go.work or the Makefile's MODULES would be left out of make test and
// make lint.
func TestEveryModuleIsInTheWorkspaceAndTheMakefile(t *testing.T) {
	used, err := Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			onDisk = append(onDisk, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(used)
	slices.Sort(onDisk)
	if !slices.Equal(used, onDisk) {
		t.Errorf("go.work uses %v, the repository has go.mod files in %v", used, onDisk)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MODULES := (.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no MODULES := line")
	}
	listed := strings.Fields(string(m[1]))
	slices.Sort(listed)
	if !slices.Equal(listed, onDisk) {
		t.Errorf("the Makefile's MODULES are %v, the repository has go.mod files in %v", listed, onDisk)
	}
}

// TestModulePaths: each nested module's path is the core's plus its
// directory, so import paths are the same as before the split.
func TestModulePaths(t *testing.T) {
	used, err := Modules(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range used {
		mf := parseMod(t, dir)
		want := "github.com/agora-etl/agora"
		if dir != "." {
			want += "/" + dir
		}
		if mf.Module.Mod.Path != want {
			t.Errorf("%s/go.mod: module %s, want %s", dir, mf.Module.Mod.Path, want)
		}
	}
}

// TestInstallableCommandHasNoReplace: go install pkg@version refuses a
// go.mod with replace directives, so cmd/agora's has none, and it requires
// its siblings by version.
func TestInstallableCommandHasNoReplace(t *testing.T) {
	mf := parseMod(t, "cmd/agora")
	if len(mf.Replace) > 0 {
		t.Errorf("cmd/agora/go.mod has %d replace directives; go install github.com/agora-etl/agora/cmd/agora@latest would refuse it", len(mf.Replace))
	}
}

// TestCoreRequiresNoConfigOnlyDependency: the core module's go.mod, which
// every worker's module graph reads, names none of the config-only path's,
// the dashboard's or the peer benchmarks' dependencies.
func TestCoreRequiresNoConfigOnlyDependency(t *testing.T) {
	mf := parseMod(t, ".")
	for _, r := range mf.Require {
		for _, heavy := range []string{"chromedp", "franz-go", "pgx", "modernc.org", "cel-go", "redsync", "redislock", "gocron", "go-toml"} {
			if strings.Contains(r.Mod.Path, heavy) {
				t.Errorf("go.mod requires %s", r.Mod.Path)
			}
		}
		if strings.HasPrefix(r.Mod.Path, "github.com/agora-etl/agora/") {
			t.Errorf("the core requires a module of its own repository, %s: a cycle", r.Mod.Path)
		}
	}
}

func parseMod(t *testing.T, dir string) *modfile.File {
	t.Helper()
	path := filepath.Join(root, dir, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return mf
}
