package gen

import (
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// Diagnostic is one problem found in the user's code, at a position.
type Diagnostic struct {
	Pos token.Position
	Msg string
}

// String formats d as file:line:col: message, with the file as given.
func (d Diagnostic) String() string {
	if !d.Pos.IsValid() {
		if d.Pos.Filename != "" {
			return d.Pos.Filename + ": " + d.Msg
		}
		return d.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Pos.Filename, d.Pos.Line, d.Pos.Column, d.Msg)
}

// Diagnostics collects every problem of a run, so that all of them can be
// reported at once, sorted by position.
type Diagnostics struct {
	list []Diagnostic
}

// Add records a problem at pos.
func (ds *Diagnostics) Add(pos token.Position, format string, args ...any) {
	ds.list = append(ds.list, Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// Len returns how many problems were recorded.
func (ds *Diagnostics) Len() int { return len(ds.list) }

// Sorted returns the problems sorted by file, line, column and message, with
// exact duplicates removed and file names made relative to dir when they lie
// below it.
func (ds *Diagnostics) Sorted(dir string) []Diagnostic {
	out := make([]Diagnostic, 0, len(ds.list))
	for _, d := range ds.list {
		d.Pos.Filename = relPath(dir, d.Pos.Filename)
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return out[i].Msg < out[j].Msg
	})
	dedup := out[:0]
	for i, d := range out {
		if i > 0 && d == out[i-1] {
			continue
		}
		dedup = append(dedup, d)
	}
	return dedup
}

// relPath returns path relative to dir when it lies below dir, and path
// unchanged otherwise.
func relPath(dir, path string) string {
	if dir == "" || path == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}
