package engine

import "testing"

func TestFormatParams(t *testing.T) {
	if got := FormatParams(map[string]string{"b": "2", "a": "1"}); got != "a=1 b=2" {
		t.Fatalf("FormatParams = %q", got)
	}
	if got := FormatParams(nil); got != "" {
		t.Fatalf("FormatParams(nil) = %q", got)
	}
}
