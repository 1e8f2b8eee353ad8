package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/bad")

// goldenEnv is the environment the bad files are checked under. The
// password is set so the tests can see that it never appears.
var goldenEnv = map[string]string{"REDIS_PASSWORD": "s3cret", "STREAM": "orders", "REDIS_HOST": "127.0.0.1", "DEADLINE": "15m"}

var diagnosticLine = regexp.MustCompile(`^testdata/bad/[a-z_]+\.toml:[0-9]+:[0-9]+: \S`)

// TestBadFiles loads every testdata/bad/*.toml and compares its
// diagnostics with the .golden file beside it. go test ./config -update
// rewrites them.
func TestBadFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			var out testOutputs
			f, err := Load(file, WithRegistry(testRegistry(&out)), WithLookupEnv(func(k string) (string, bool) {
				v, ok := goldenEnv[k]
				return v, ok
			}))
			var ds Diagnostics
			if !errors.As(err, &ds) || f != nil {
				t.Fatalf("Load = %v, %v; want Diagnostics and no file", f, err)
			}
			got := ds.Error() + "\n"
			for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if !diagnosticLine.MatchString(line) {
					t.Errorf("not a file:line:col: message diagnostic: %q", line)
				}
			}
			if strings.Contains(got, "s3cret") {
				t.Errorf("a diagnostic leaks the password:\n%s", got)
			}
			golden := strings.TrimSuffix(file, ".toml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./config -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("diagnostics of %s:\n%s\nwant (%s):\n%s", file, got, golden, want)
			}
		})
	}
}
