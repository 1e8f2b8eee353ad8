package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, that every failure is
// a non-empty Diagnostics, and that every diagnostic says where:
// file:line:col. The seeds are the test files (the bad-file corpus under
// testdata/bad among them); go test runs them, and make test explores
// further for a few seconds (go test -fuzz=FuzzParse -fuzztime=10s).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.toml")
	bad, _ := filepath.Glob("testdata/bad/*.toml")
	for _, name := range append(files, bad...) {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	reg := testRegistry(&testOutputs{})
	env := func(k string) (string, bool) { v, ok := goldenEnv[k]; return v, ok }
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f.toml", data, WithRegistry(reg), WithLookupEnv(env))
		if err == nil {
			if file == nil {
				t.Fatal("nil file and nil error")
			}
			_ = file.Summary()
			return
		}
		var ds Diagnostics
		if !errors.As(err, &ds) || len(ds) == 0 || file != nil {
			t.Fatalf("error %v (%T), file %v", err, err, file)
		}
		for _, d := range ds {
			if d.File != "f.toml" || d.Line < 1 || d.Col < 1 || d.Message == "" {
				t.Fatalf("diagnostic without file:line:col: %+v", d)
			}
		}
	})
}
