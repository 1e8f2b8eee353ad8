package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Diagnostic is one problem of a configuration file, at the position it
// concerns. Line and Col start at 1; Col counts bytes. A Diagnostic about
// the file as a whole (it cannot be read) has Line 0.
type Diagnostic struct {
	File    string
	Line    int
	Col     int
	Message string
}

// String formats d as file:line:col: message.
func (d Diagnostic) String() string {
	if d.Line <= 0 {
		return d.File + ": " + d.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Message)
}

// Diagnostics is the error Load and Parse return for a file with problems:
// every problem found, sorted by file, line, column and message.
type Diagnostics []Diagnostic

// Error lists the problems one a line.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// sorted returns ds sorted, with exact duplicates removed.
func (ds Diagnostics) sorted() Diagnostics {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.Compact(out)
}
