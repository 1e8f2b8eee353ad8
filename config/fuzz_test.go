package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that every failure
// is a non-empty Diagnostics. The seeds are the test files; go test runs
// them, go test -fuzz=FuzzParse explores further.
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
	})
}
