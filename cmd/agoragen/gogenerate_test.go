package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGoGenerateRunsAgoragenOnlyWhereThereAreDirectives keeps go generate ./...
// (make generate, make run) quiet: every //go:generate line that runs agoragen
// sits in a package directory that has //agora: directives, so agoragen never
// answers "nothing to generate". go generate reads test files too, so a line
// inside a raw string of a _test.go file counts.
func TestGoGenerateRunsAgoragenOnlyWhereThereAreDirectives(t *testing.T) {
	root := filepath.Join("..", "..")
	generates := map[string][]string{} // dir → file:line of each agoragen line
	directives := map[string]bool{}    // dir → has an //agora: line
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// go generate ./... skips testdata and dot or underscore folders.
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		dir := filepath.Dir(path)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(line, "//go:generate ") && strings.Contains(line, "agoragen") {
				generates[dir] = append(generates[dir], path+":"+strconv.Itoa(n))
			}
			if strings.HasPrefix(line, "//agora:") && !strings.HasSuffix(path, "_test.go") {
				directives[dir] = true
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(generates) == 0 {
		t.Fatal("no //go:generate line runs agoragen; the walk is broken")
	}
	for dir, at := range generates {
		if !directives[dir] {
			t.Errorf("%s: //go:generate runs agoragen in %s, which has no //agora: directives (go generate ./... would print \"nothing to generate\")", strings.Join(at, ", "), dir)
		}
	}
}
