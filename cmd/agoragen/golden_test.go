package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/gen"
)

var update = flag.Bool("update", false, "rewrite the want/ files of testdata/golden")

// goldenRoot is testdata/golden of this module, found from this package's
// directory so the suite runs from any checkout.
func goldenRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goldenCases lists the case directories.
func goldenCases(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(goldenRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	return cases
}

// caseOptions reads the optional "flags" file of a case: agoragen flags, as
// on the command line, without packages.
func caseOptions(t *testing.T, dir string) gen.Options {
	t.Helper()
	var args []string
	if b, err := os.ReadFile(filepath.Join(dir, "flags")); err == nil {
		args = strings.Fields(string(b))
	}
	opts, _, ok := parseFlags(args, io.Discard)
	if !ok {
		t.Fatalf("bad flags file in %s: %q", dir, args)
	}
	opts.Dir = dir
	return opts
}

// TestGolden runs the generator on every case of testdata/golden and compares
// the generated file with want/worker.go, or the diagnostics with
// want/errors.txt. go test ./cmd/agoragen -update rewrites them.
func TestGolden(t *testing.T) {
	root := goldenRoot(t)
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(root, name)
			opts := caseOptions(t, dir)
			res, err := gen.Generate(context.Background(), opts.Config)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			wantDir := filepath.Join(dir, "want")
			var gotName string
			var got []byte
			switch {
			case len(res.Diagnostics) > 0:
				gotName = "errors.txt"
				var b strings.Builder
				for _, d := range res.Diagnostics {
					b.WriteString(d.String() + "\n")
				}
				got = []byte(b.String())
				if len(res.Files) != 0 {
					t.Errorf("diagnostics and %d files: a run with errors must write nothing", len(res.Files))
				}
			case len(res.Files) == 1:
				gotName = filepath.Base(res.Files[0].Path)
				got = res.Files[0].Content
			default:
				t.Fatalf("want one generated file or diagnostics, got %d files", len(res.Files))
			}
			if *update {
				if err := os.RemoveAll(wantDir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(wantDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(wantDir, gotName), got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(filepath.Join(wantDir, gotName))
			if err != nil {
				t.Fatalf("generator produced %s, but the case has no want/%s (run go test ./cmd/agoragen -update): %v\n%s", gotName, gotName, err, got)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from want/%s (go test ./cmd/agoragen -update rewrites it):\n%s", gotName, gotName,
					gen.UnifiedDiff("want/"+gotName, "got", want, got))
			}
		})
	}
}
