package history_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agora-etl/agora/runtime/history"
)

func TestErrorTextRedactsAndBounds(t *testing.T) {
	if got := history.ErrorText(nil); got != "" {
		t.Errorf("ErrorText(nil) = %q", got)
	}
	got := history.ErrorText(errors.New("dial redis://app:hunter2@db:6379 failed"))
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "redis://app:xxxxx@db") {
		t.Errorf("not redacted: %q", got)
	}
	// A cut falls at a character's start: "é" is two bytes, and an odd
	// bound would split one.
	long := strings.Repeat("x", 1) + strings.Repeat("é", history.MaxErrorLen)
	got = history.ErrorText(errors.New(long))
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > history.MaxErrorLen+len("…") {
		t.Errorf("cut to %d bytes, valid UTF-8 %v, suffix %q", len(got), utf8.ValidString(got), got[len(got)-5:])
	}
	short := strings.Repeat("y", history.MaxErrorLen)
	if got := history.ErrorText(errors.New(short)); got != short {
		t.Errorf("an error of MaxErrorLen bytes was cut to %d", len(got))
	}
}
