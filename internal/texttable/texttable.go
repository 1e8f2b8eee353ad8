// Package texttable writes the aligned plain-text tables of the command line:
// the worker binary's subcommands and the fleet commands.
package texttable

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
)

// Table writes rows aligned in columns two spaces apart. Nothing is written
// until Flush, which needs every row to align the columns.
type Table struct {
	w *tabwriter.Writer
}

// New returns a table writing to out, with headers as its first row when
// there are any.
func New(out io.Writer, headers ...string) *Table {
	t := &Table{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	if len(headers) > 0 {
		t.Row(headers...)
	}
	return t
}

// Row adds one row. A cell holding a control character (a worker id with a
// newline or a tab) is written quoted with strconv.Quote, so it can neither
// break the row nor forge another. cells is not modified.
func (t *Table) Row(cells ...string) {
	written := make([]string, len(cells))
	for i, c := range cells {
		written[i] = Printable(c)
	}
	fmt.Fprintln(t.w, strings.Join(written, "\t"))
}

// Printable is s, or s quoted (strconv.Quote) when it holds a control
// character such as a newline, which would otherwise break a line of
// output or forge one.
func Printable(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// Flush writes the table out.
func (t *Table) Flush() error { return t.w.Flush() }
