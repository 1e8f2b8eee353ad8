package runtime

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// textTable writes aligned columns for the worker's subcommands.
type textTable struct{ w *tabwriter.Writer }

func newTextTable(out io.Writer, headers ...string) *textTable {
	t := &textTable{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	if len(headers) > 0 {
		t.row(headers...)
	}
	return t
}

func (t *textTable) row(cells ...string) { fmt.Fprintln(t.w, strings.Join(cells, "\t")) }

func (t *textTable) flush() { _ = t.w.Flush() }
