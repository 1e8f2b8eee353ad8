package sqlrec

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDocsNameTheColumnRules keeps docs/etl.md's word on on_unknown_field
// and on when the table's columns are read again in step with the code.
func TestDocsNameTheColumnRules(t *testing.T) {
	b, err := os.ReadFile("../../../docs/etl.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		"`on_unknown_field`",
		"`\"" + UnknownReject + "\"` (default)",
		"`\"" + UnknownIgnore + "\"`",
		strconv.Itoa(int(ColumnsMaxAge.Seconds())) + " s ago or more (`ColumnsMaxAge` in `etl/internal/sqlrec`)",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/etl.md does not say %s", want)
		}
	}
}
