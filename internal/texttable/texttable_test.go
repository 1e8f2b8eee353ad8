package texttable

import (
	"bytes"
	"strings"
	"testing"
)

func TestColumnsAlignTwoSpacesApart(t *testing.T) {
	var b bytes.Buffer
	tb := New(&b, "PIPELINE", "SCHEDULE")
	tb.Row("orders-hourly", "every 1h")
	tb.Row("x", "once")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "PIPELINE       SCHEDULE\n" +
		"orders-hourly  every 1h\n" +
		"x              once\n"
	if b.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWithoutHeaders(t *testing.T) {
	var b bytes.Buffer
	tb := New(&b)
	tb.Row("  run", "runs once")
	tb.Row("  pipelines", "lists them")
	_ = tb.Flush()
	if want := "  run        runs once\n  pipelines  lists them\n"; b.String() != want {
		t.Fatalf("table:\n%q\nwant:\n%q", b.String(), want)
	}
}

// Rule: a cell with a control character is quoted, so a worker id with a
// newline cannot make a row of its own.
func TestQuotesControlCharacters(t *testing.T) {
	var b bytes.Buffer
	tb := New(&b, "WORKER", "HOST")
	cells := []string{"w1\nfake\tline", "h\x1b"}
	tb.Row(cells...)
	tb.Row("w2", "h")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], `"w1\nfake\tline"`) || !strings.HasSuffix(lines[1], `"h\x1b"`) || !strings.HasPrefix(lines[2], "w2 ") {
		t.Fatalf("table:\n%s", b.String())
	}
	if cells[0] != "w1\nfake\tline" {
		t.Errorf("Row modified its argument: %q", cells[0])
	}
}
