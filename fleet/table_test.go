package fleet

import (
	"bytes"
	"strings"
	"testing"
)

// Rule: a cell with a control character is quoted, so a worker id with a
// newline cannot make a row of its own.
func TestTableQuotesControlCharacters(t *testing.T) {
	var b bytes.Buffer
	tb := newTable(&b, "WORKER", "HOST")
	tb.row("w1\nfake\tline", "h")
	tb.row("w2", "h")
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], `"w1\nfake\tline"`) || !strings.HasPrefix(lines[2], "w2 ") {
		t.Fatalf("table:\n%s", b.String())
	}
}
