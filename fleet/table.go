package fleet

import (
	"io"

	"github.com/agora-etl/agora/internal/texttable"
)

// table writes rows aligned in columns, headers first, with
// internal/texttable: a cell holding a control character is quoted.
type table struct{ t *texttable.Table }

func newTable(out io.Writer, headers ...string) *table {
	return &table{t: texttable.New(out, headers...)}
}

// row writes one row.
func (t *table) row(cells ...string) { t.t.Row(cells...) }

func (t *table) flush() error { return t.t.Flush() }
