package fleet

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
)

// table writes rows aligned in columns two spaces apart, headers first.
type table struct {
	w *tabwriter.Writer
}

func newTable(out io.Writer, headers ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	t.row(headers...)
	return t
}

// row writes one row. A cell holding a control character (a worker id
// with a newline or a tab) is quoted with strconv.Quote, so it can neither
// break the row nor forge another.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if strings.IndexFunc(c, unicode.IsControl) >= 0 {
			cells[i] = strconv.Quote(c)
		}
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }
