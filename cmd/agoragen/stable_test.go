package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addUnrelatedLines returns src with a comment and a blank line added at
// the top of the file and above the doc comment of every function: edits
// that change no declaration, only the lines everything sits on.
func addUnrelatedLines(src string) string {
	lines := strings.Split(src, "\n")
	var out []string
	out = append(out, "// A note added at the top of the file.", "")
	for i, line := range lines {
		if strings.HasPrefix(line, "//") && (i == 0 || !strings.HasPrefix(lines[i-1], "//")) && docOfFunc(lines, i) {
			out = append(out, "// A note added above the factory.", "")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// docOfFunc reports whether the comment block starting at lines[i] is the
// doc comment of a function.
func docOfFunc(lines []string, i int) bool {
	for ; i < len(lines) && strings.HasPrefix(lines[i], "//"); i++ {
	}
	return i < len(lines) && strings.HasPrefix(lines[i], "func ")
}

// TestAddedLinesLeaveWorkerGoUnchanged: worker.go names the factories'
// files, not their lines, so comment and blank lines added above a factory
// (or anywhere in the package) leave it byte-identical and agoragen -check
// passes. The inputs are the golden cases' packages, copied into a module
// of their own, plus a file with no directive.
func TestAddedLinesLeaveWorkerGoUnchanged(t *testing.T) {
	for _, name := range []string{"basic", "catch_up", "e2e_worker"} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"other.go": "package " + goldenPackage(t, name) + "\n\n// Unrelated is not a pipeline.\nconst Unrelated = 1\n"}
			entries, err := os.ReadDir(filepath.Join(goldenRoot(t), name))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
					files[e.Name()] = readFile(t, filepath.Join(goldenRoot(t), name, e.Name()))
				}
			}
			dir := userModule(t, true, files)
			if code, _, stderr := runCmd(t); code != 0 {
				t.Fatalf("agoragen: exit %d: %s", code, stderr)
			}
			before := readFile(t, filepath.Join(dir, "worker.go"))

			moved := 0
			for file, src := range files {
				edited := addUnrelatedLines(src)
				moved += strings.Count(edited, "added above the factory")
				writeFile(t, filepath.Join(dir, file), []byte(edited))
			}
			if moved == 0 {
				t.Fatal("no factory was moved: the test edits nothing it is about")
			}
			if code, stdout, stderr := runCmd(t, "-check"); code != 0 {
				t.Fatalf("agoragen -check after adding lines: exit %d\n%s%s", code, stdout, stderr)
			}
			if code, _, stderr := runCmd(t); code != 0 {
				t.Fatalf("agoragen after adding lines: exit %d: %s", code, stderr)
			}
			if after := readFile(t, filepath.Join(dir, "worker.go")); after != before {
				t.Errorf("worker.go changed although only comment and blank lines were added:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// goldenPackage is the package name of a golden case's input files.
func goldenPackage(t *testing.T, name string) string {
	t.Helper()
	src := readFile(t, filepath.Join(goldenRoot(t), name, "want", "worker.go"))
	for _, line := range strings.Split(src, "\n") {
		if pkg, ok := strings.CutPrefix(line, "package "); ok {
			return pkg
		}
	}
	t.Fatalf("no package clause in %s/want/worker.go", name)
	return ""
}

// TestAddUnrelatedLines pins the edit the test above relies on.
func TestAddUnrelatedLines(t *testing.T) {
	got := addUnrelatedLines("package p\n\n// F is f.\n//\n//agora:schedule once\nfunc F() {}\n")
	want := "// A note added at the top of the file.\n\npackage p\n\n// A note added above the factory.\n\n// F is f.\n//\n//agora:schedule once\nfunc F() {}\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
